// Taps elsewhere on the page must not leave the scanner typing into nothing.
(function () {
  var input = document.getElementById("scanned");
  document.addEventListener("click", function (event) {
    if (!event.target.closest("a, button, input")) input.focus();
  });
  // A page restored from the back/forward cache keeps the last scan typed in: empty it. A fresh
  // page starts empty (autofocus, autocomplete off), and emptying it again once it has loaded
  // would drop what a scanner already typed.
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) input.value = "";
    input.focus();
  });
})();
