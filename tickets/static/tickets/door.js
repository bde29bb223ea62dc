// Taps elsewhere on the page must not leave the scanner typing into nothing.
(function () {
  var input = document.getElementById("scanned");
  document.addEventListener("click", function (event) {
    if (!event.target.closest("a, button, input")) input.focus();
  });
  window.addEventListener("pageshow", function () { input.value = ""; input.focus(); });
})();
