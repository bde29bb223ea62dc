"""The sale as one app: the orders' migrations 0001-0008 and the tickets' 0001-0012 in one.

A database those had migrated (the tickets app's tables and rows included) counts this one as
applied, since it replaces every orders migration; the tickets' tables keep their names
(`tickets_ticket`, `tickets_ticketimage`), so no row is copied. 0002 then gives the moved models'
content types (and with them their permissions) and audit records to this app.
"""

import django.core.validators
import django.db.models.deletion
import museum.i18n
import uuid
from decimal import Decimal

from django.conf import settings
from django.db import migrations, models


# (code, general-admission price, share of an event's price, check proof, needs a companion,
# the name in each shipped language)
DEFAULT_CATEGORIES = [
    ("adult", Decimal("15.00"), 100, False, False,
     {"en": "Adult", "de": "Erwachsene", "fr": "Adulte", "nl": "Volwassene", "es": "Adulto"}),
    ("child", Decimal("7.50"), 50, True, False,
     {"en": "Child (6-17)", "de": "Kind (6-17 Jahre)", "fr": "Enfant (6-17 ans)",
      "nl": "Kind (6-17 jaar)", "es": "Niño (6-17 años)"}),
    ("student", Decimal("10.00"), 75, True, False,
     {"en": "Student", "de": "Studierende", "fr": "Étudiant", "nl": "Student",
      "es": "Estudiante"}),
    ("senior", Decimal("12.00"), 80, True, False,
     {"en": "Senior (65+)", "de": "Senioren (ab 65)", "fr": "Senior (65 ans et plus)",
      "nl": "65-plusser", "es": "Mayor de 65 años"}),
    ("infant", Decimal("0.00"), 0, True, True,
     {"en": "Infant (under 6)", "de": "Kleinkind (unter 6 Jahren)",
      "fr": "Enfant de moins de 6 ans", "nl": "Kind onder 6 jaar",
      "es": "Niño menor de 6 años"}),
]


def create_default_categories(apps, schema_editor):
    """The visitor categories a new museum starts with, named in every shipped language.
    tests/conftest.py runs it again after a flush."""
    VisitorCategory = apps.get_model("orders", "VisitorCategory")
    for ordering, (code, price, percent, check, companion, names) in enumerate(
        DEFAULT_CATEGORIES
    ):
        VisitorCategory.objects.get_or_create(
            category=code,
            defaults={
                "name": names[settings.MUSEUM_LANGUAGE],
                **{f"name_{language}": name for language, name in names.items()},
                "general_price": price,
                "event_price_percent": percent,
                "check_at_door": check,
                "needs_companion": companion,
                "ordering": ordering,
            },
        )


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('orders', '0001_initial'),
        ('orders', '0002_default_visitor_categories'),
        ('orders', '0003_order_confirmation_task'),
        ('orders', '0004_payments'),
        ('orders', '0005_order_name_and_front_desk'),
        ('orders', '0006_kept_tickets_pdf'),
        ('orders', '0007_visitor_category_translations'),
        ('orders', '0008_order_language'),
    ]

    dependencies = [
        ('events', '0005_event_translations'),
        ('hours', '0003_entry_slots'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Order',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('email', models.EmailField(max_length=254)),
                ('phone', models.CharField(blank=True, max_length=32)),
                ('name', models.CharField(blank=True, max_length=100)),
                ('language', models.CharField(default=museum.i18n.museum_language_code, max_length=8)),
                ('status', models.CharField(choices=[('confirmed', 'Confirmed'), ('held', 'Held (not paid yet)'), ('expired', 'Hold expired'), ('cancelled', 'Cancelled')], max_length=10)),
                ('hold_expires_at', models.DateTimeField(blank=True, null=True)),
                ('confirmation_code', models.CharField(max_length=40, unique=True)),
                ('ticket_type', models.CharField(max_length=10, verbose_name='type')),
                ('date', models.DateField(db_index=True)),
                ('total', models.DecimalField(decimal_places=2, max_digits=10)),
                ('channel', models.CharField(choices=[('online', 'Online (paid through a provider)'), ('on_account', 'On account (a sales partner)')], default='online', max_length=10)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('confirmed_at', models.DateTimeField(blank=True, null=True)),
                ('cancelled_at', models.DateTimeField(blank=True, null=True)),
                ('confirmation_sent_at', models.DateTimeField(blank=True, editable=False, null=True)),
                ('confirmation_task_id', models.CharField(blank=True, editable=False, max_length=64)),
                ('buyer', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='orders', to=settings.AUTH_USER_MODEL)),
                ('event', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='orders', to='events.specialevent')),
                ('slot', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='orders', to='hours.entryslot')),
            ],
            options={
                'ordering': ['-created_at'],
                'permissions': [('cancel_any_order', 'Can cancel any order, past the deadline too'), ('sell_on_account', 'Can sell on account (a sales partner; paid by invoice)'), ('take_desk_payment', 'Can take a payment at the desk (cash or card terminal)'), ('sell_at_desk', 'Can sell, move, reprint and resend orders at the front desk')],
            },
        ),
        migrations.CreateModel(
            name='Ticket',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('ticket_type', models.CharField(choices=[('event', 'Special event'), ('general', 'General entry')], max_length=10, verbose_name='type')),
                ('date', models.DateField(db_index=True)),
                ('price', models.DecimalField(decimal_places=2, max_digits=8, verbose_name='price paid')),
                ('confirmation_code', models.CharField(max_length=40, unique=True)),
                ('purchased_at', models.DateTimeField(auto_now_add=True)),
                ('cancelled_at', models.DateTimeField(blank=True, null=True)),
                ('checked_in_at', models.DateTimeField(blank=True, null=True)),
                ('held', models.BooleanField(default=False)),
                ('buyer', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='tickets', to=settings.AUTH_USER_MODEL)),
                ('cancelled_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('checked_in_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('event', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='tickets', to='events.specialevent')),
                ('event_date', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='tickets', to='events.eventdate')),
                ('museum_day', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='tickets', to='hours.museumday')),
                ('order', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='tickets', to='orders.order')),
                ('slot', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='tickets', to='hours.entryslot')),
            ],
            options={
                'db_table': 'tickets_ticket',
                'ordering': ['-purchased_at'],
                'permissions': [('check_in_ticket', 'Can check tickets in at the door')],
            },
        ),
        migrations.CreateModel(
            name='TicketsPdf',
            fields=[
                ('order', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='tickets_pdf', serialize=False, to='orders.order')),
                ('pdf', models.BinaryField()),
                ('etag', models.CharField(max_length=64)),
                ('made_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'verbose_name': 'tickets PDF',
                'verbose_name_plural': 'tickets PDFs',
            },
        ),
        migrations.CreateModel(
            name='Payment',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('provider', models.CharField(max_length=20)),
                ('reference', models.CharField(blank=True, db_index=True, max_length=100)),
                ('amount', models.DecimalField(decimal_places=2, max_digits=10)),
                ('currency', models.CharField(max_length=3)),
                ('state', models.CharField(choices=[('created', 'Created'), ('pending', 'Pending (the buyer is paying)'), ('confirmed', 'Confirmed'), ('failed', 'Failed'), ('cancelled', 'Cancelled'), ('refunded', 'Refunded whole')], default='created', max_length=10)),
                ('info', models.CharField(blank=True, max_length=200)),
                ('tendered', models.DecimalField(blank=True, decimal_places=2, max_digits=10, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('confirmed_at', models.DateTimeField(blank=True, null=True)),
                ('order', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='payments', to='orders.order')),
                ('taken_by', models.ForeignKey(help_text='Who started it: the buyer, or staff at the desk.', on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created_at'],
            },
        ),
        migrations.CreateModel(
            name='ProviderEvent',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('provider', models.CharField(max_length=20)),
                ('event_id', models.CharField(max_length=255)),
                ('received_at', models.DateTimeField(auto_now_add=True)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('provider', 'event_id'), name='provider_event_once')],
            },
        ),
        migrations.CreateModel(
            name='SaleLimits',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('max_held_places', models.PositiveIntegerField(blank=True, help_text="Empty: the museum's default.", null=True, verbose_name='places held at once')),
                ('max_places_per_day', models.PositiveIntegerField(blank=True, help_text="Empty: the museum's default.", null=True, verbose_name='places per visit date')),
                ('account', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='sale_limits', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'sale limits',
                'verbose_name_plural': 'sale limits',
            },
        ),
        migrations.CreateModel(
            name='TicketImage',
            fields=[
                ('ticket', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='image', serialize=False, to='orders.ticket')),
                ('png', models.BinaryField()),
                ('etag', models.CharField(max_length=64)),
                ('rendered_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'db_table': 'tickets_ticketimage',
            },
        ),
        migrations.CreateModel(
            name='Refund',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('amount', models.DecimalField(decimal_places=2, max_digits=8)),
                ('state', models.CharField(choices=[('created', 'Created (being paid back)'), ('done', 'Done'), ('failed', 'Failed'), ('manual', 'Manual (staff pay it back by hand)')], default='created', max_length=10)),
                ('source', models.CharField(choices=[('buyer', 'Cancelled by the buyer'), ('staff', 'Cancelled by staff'), ('event_cancelled', 'Event called off'), ('not_placed', 'Paid after the hold ran out, places gone')], max_length=20)),
                ('reference', models.CharField(blank=True, max_length=100)),
                ('error', models.CharField(blank=True, max_length=500)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('done_at', models.DateTimeField(blank=True, null=True)),
                ('cancelled_by', models.ForeignKey(blank=True, help_text='Empty: the museum called the event off, or a payment came too late.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('order', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='refunds', to='orders.order')),
                ('payment', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='refunds', to='orders.payment')),
                ('ticket', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='refund', to='orders.ticket')),
            ],
            options={
                'ordering': ['-created_at'],
            },
        ),
        migrations.CreateModel(
            name='VisitorCategory',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('category', models.SlugField(help_text="What the API calls it, e.g. 'child'.", max_length=40, unique=True, verbose_name='code')),
                ('name', models.CharField(max_length=100)),
                ('name_en', models.CharField(max_length=100, null=True)),
                ('name_de', models.CharField(max_length=100, null=True)),
                ('name_fr', models.CharField(max_length=100, null=True)),
                ('name_nl', models.CharField(max_length=100, null=True)),
                ('name_es', models.CharField(max_length=100, null=True)),
                ('general_price', models.DecimalField(decimal_places=2, max_digits=8, validators=[django.core.validators.MinValueValidator(Decimal('0'))], verbose_name='general-admission price')),
                ('event_price_percent', models.PositiveSmallIntegerField(default=100, help_text="What this visitor pays of a special event's price, in percent.", validators=[django.core.validators.MaxValueValidator(100)], verbose_name="share of an event's price (%)")),
                ('check_at_door', models.BooleanField(default=False, help_text='The door asks staff to check proof of age or status.', verbose_name='check proof at the door')),
                ('needs_companion', models.BooleanField(default=False, help_text='Sold only beside a ticket of a category that does not need one (e.g. infants with an adult).')),
                ('active', models.BooleanField(default=True, help_text='Sold only while active.')),
                ('ordering', models.PositiveSmallIntegerField(default=0, help_text='Lower comes first.')),
            ],
            options={
                'verbose_name': 'visitor category',
                'verbose_name_plural': 'visitor categories',
                'ordering': ['ordering', 'category'],
                'constraints': [models.CheckConstraint(condition=models.Q(('general_price__gte', 0)), name='category_price_not_negative'), models.CheckConstraint(condition=models.Q(('event_price_percent__lte', 100)), name='category_event_percent_at_most_100')],
            },
        ),
        migrations.AddField(
            model_name='ticket',
            name='category',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='tickets', to='orders.visitorcategory'),
        ),
        migrations.AddIndex(
            model_name='order',
            index=models.Index(condition=models.Q(('status', 'held')), fields=['hold_expires_at'], name='order_holds_due'),
        ),
        migrations.AddConstraint(
            model_name='order',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('status', 'held'), _negated=True), ('hold_expires_at__isnull', False), _connector='OR'), name='held_order_has_expiry'),
        ),
        migrations.AddConstraint(
            model_name='payment',
            constraint=models.UniqueConstraint(condition=models.Q(('state', 'confirmed')), fields=('order',), name='one_confirmed_payment_per_order'),
        ),
        migrations.AddConstraint(
            model_name='payment',
            constraint=models.CheckConstraint(condition=models.Q(('amount__gt', 0)), name='payment_amount_positive'),
        ),
        migrations.AddConstraint(
            model_name='refund',
            constraint=models.CheckConstraint(condition=models.Q(('amount__gte', 0)), name='refund_amount_not_negative'),
        ),
        migrations.AddConstraint(
            model_name='ticket',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('event__isnull', False), ('ticket_type', 'event')), models.Q(('event__isnull', True), ('ticket_type', 'general')), _connector='OR'), name='event_ticket_has_event'),
        ),
        migrations.AddConstraint(
            model_name='ticket',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('event_date__isnull', False), ('museum_day__isnull', True), ('ticket_type', 'event')), models.Q(('event_date__isnull', True), ('museum_day', models.F('date')), ('ticket_type', 'general')), _connector='OR'), name='ticket_counted_on_its_row'),
        ),
        migrations.RunPython(create_default_categories, migrations.RunPython.noop),
    ]
