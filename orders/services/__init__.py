"""The sale's rules, in rooms by job: `pricing` (visitor categories and prices), `places`
(counting a sale's places on its rows), `sale` (placing an order), `limits` (places one may
take), `holds`, `payments`, `changes`, `cancellation` and `personal_data`. Callers import each
function from the room that owns it."""
