"""British English as the museum writes it: Django's en_GB formats with a 24-hour clock (its own
use "2:30 p.m."); the rest come from Django's."""

TIME_FORMAT = "H:i"  # '14:30'
DATETIME_FORMAT = "j M Y, H:i"  # '25 Oct 2006, 14:30'
SHORT_DATETIME_FORMAT = "d/m/Y H:i"  # '25/10/2006 14:30'
