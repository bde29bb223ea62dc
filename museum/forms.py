"""What the staff's own forms share, the admin's and the desk's."""

from django import forms

# The browser's own date picker; the value as ISO 8601, which it sends back.
DATE_INPUT = forms.DateInput(format="%Y-%m-%d", attrs={"type": "date"})
