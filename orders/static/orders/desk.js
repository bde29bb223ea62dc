// The front desk (templates/orders/desk/): keyboard first. A sale adds its total and, for cash,
// the change up as it is typed; +/- steppers beside each quantity; the slot picker follows the
// day and the event chosen; after a sale, focus goes to Print, then to the next sale. Without
// this script every form still posts and the server prices and checks everything.
(function () {
  var sale = document.getElementById("sale");

  function number(text) {
    var value = parseFloat(String(text || "").replace(",", "."));
    return isNaN(value) ? 0 : value;
  }

  function addUp() {
    if (!sale) return;
    var event = sale.elements.event ? sale.elements.event.value : "";
    var cents = 0;
    sale.querySelectorAll("input.quantity").forEach(function (input) {
      var prices = JSON.parse(input.dataset.prices);
      var price = prices[event] !== undefined ? prices[event] : prices[""];
      cents += Math.round(number(price) * 100) * Math.max(0, Math.floor(number(input.value)));
    });
    document.getElementById("total").textContent = (cents / 100).toFixed(2);
    var change = document.getElementById("change");
    var cash = sale.querySelector("input[name=payment][value=cash]");
    var handed = sale.elements.tendered.value;
    if (!handed || (cash && !cash.checked)) {
      change.textContent = "";
    } else {
      var left = Math.round(number(handed) * 100) - cents;
      change.textContent = (left / 100).toFixed(2);
      change.classList.toggle("short", left < 0);
    }
  }

  if (sale) {
    sale.addEventListener("input", addUp);
    sale.addEventListener("change", addUp);
    sale.addEventListener("click", function (event) {
      var step = event.target.closest("button.step");
      if (!step) return;
      var input = step.parentNode.querySelector("input");
      input.value = String(Math.max(0, Math.floor(number(input.value)) + Number(step.dataset.step)));
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });
    // A quantity's 0 is selected on focus: typing replaces it.
    sale.addEventListener("focusin", function (event) {
      if (event.target.matches("input.quantity, #id_tendered")) event.target.select();
    });
    var first = sale.querySelector("input.quantity");
    if (first) {
      first.focus();
      first.select();
    }
    addUp();
  }

  // The slot picker: another day or event brings that day's slots (or the event's dates).
  document.querySelectorAll(".slots").forEach(function (slots) {
    var form = slots.closest("form");
    var day = form.elements.ticket_date;
    var event = form.elements.event;
    function refresh() {
      var picker = form.querySelector(".slots");
      var chosen = form.querySelector(".slots input:checked");
      var query = new URLSearchParams({
        ticket_date: day.value,
        event: event ? event.value : "",
        chosen: chosen ? chosen.value : "",
      });
      fetch(picker.dataset.url + "?" + query, { credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.text() : null; })
        .then(function (html) {
          if (html === null) return;
          var fresh = new DOMParser().parseFromString(html, "text/html").querySelector(".slots");
          if (fresh) form.querySelector(".slots").replaceWith(document.importNode(fresh, true));
        });
    }
    day.addEventListener("change", refresh);
    if (event) event.addEventListener("change", refresh);
    form.addEventListener("click", function (click) {
      var date = click.target.closest("button[data-date]");
      if (!date) return;
      day.value = date.dataset.date;
      refresh();
    });
  });

  // After a sale, Print has focus; printing moves it on to the next sale.
  var print = document.getElementById("print");
  var next = document.getElementById("next-sale");
  if (print && document.querySelector(".messages .sold")) print.focus();
  if (print && next) {
    print.addEventListener("click", function () {
      window.setTimeout(function () { next.focus(); }, 0);
    });
  }
})();
