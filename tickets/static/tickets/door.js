// The door page (templates/tickets/door.html). A scan, typed by a keyboard-wedge scanner or read
// by the camera, is posted to the page itself as the form would post it; the answer's verdict
// replaces the last one without reloading, so the camera keeps running, and the door beeps and
// vibrates. Without this script the form posts and the page reloads, as it always did.
(function () {
  var form = document.querySelector("form.scan");
  var input = document.getElementById("scanned");
  var answer = document.getElementById("answer");
  var sent = 0; // the latest scan's number: an older scan's late answer is dropped

  // Taps elsewhere on the page must not leave the scanner typing into nothing.
  document.addEventListener("click", function (event) {
    if (!event.target.closest("a, button, input, video")) input.focus();
  });
  // A page restored from the back/forward cache keeps the last scan typed in: empty it. A fresh
  // page starts empty (autofocus, autocomplete off), and emptying it again once it has loaded
  // would drop what a scanner already typed.
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) input.value = "";
    // A group's question waits for its count; else the next scan.
    (document.getElementById("arrived") || input).focus();
  });

  // Sound needs an AudioContext made after a tap or a key (the browser's autoplay rule): the
  // scanner's first keys or the camera button make it.
  var audio = null;
  function wakeAudio() {
    var AudioContext = window.AudioContext || window.webkitAudioContext;
    if (!audio && AudioContext) audio = new AudioContext();
    if (audio && audio.state === "suspended") audio.resume();
  }
  document.addEventListener("keydown", wakeAudio);
  document.addEventListener("pointerdown", wakeAudio);

  // A high short beep for ADMIT, a low long buzz for REFUSE; a phone also vibrates.
  function signal(admitted) {
    if (navigator.vibrate) navigator.vibrate(admitted ? 150 : [300, 100, 300]);
    if (audio) {
      var tone = audio.createOscillator();
      var volume = audio.createGain();
      tone.type = admitted ? "sine" : "square";
      tone.frequency.value = admitted ? 1320 : 220;
      volume.gain.value = 0.25;
      tone.connect(volume);
      volume.connect(audio.destination);
      tone.start();
      tone.stop(audio.currentTime + (admitted ? 0.15 : 0.6));
    }
    // What the page last signalled, and how many times: for the staff's tests and ours.
    document.body.dataset.signal = admitted ? "admit" : "refuse";
    document.body.dataset.signals = String(Number(document.body.dataset.signals || 0) + 1);
  }

  // With the camera on, a verdict overlays its view and clears itself after a few seconds, so
  // the next visitor's code can be shown without scrolling.
  var CLEAR_AFTER = 5000; // ms
  var clearing = null;

  function show(html) {
    window.clearTimeout(clearing);
    var page = new DOMParser().parseFromString(html, "text/html");
    var fresh = page.getElementById("answer");
    if (!fresh) return false;
    answer.replaceWith(document.importNode(fresh, true));
    answer = document.getElementById("answer");
    document.getElementById("admitted-today").textContent =
      page.getElementById("admitted-today").textContent;
    document.title = page.title;
    var verdict = document.getElementById("verdict");
    if (verdict) signal(verdict.dataset.admitted === "true");
    // A group's question: the count is typed next, over the number of those still to come.
    var arrived = document.getElementById("arrived");
    if (arrived) {
      arrived.focus();
      arrived.select();
    }
    if (verdict && document.body.classList.contains("camera-on")) {
      clearing = window.setTimeout(function () {
        if (verdict.isConnected) verdict.remove();
      }, CLEAR_AFTER);
    }
    return true;
  }

  function send(text, done) {
    var body = new FormData(form);
    body.set("scanned", text);
    input.value = "";
    // A count of people is for the one card scanned with it.
    var people = document.getElementById("people");
    if (people) people.value = "";
    input.focus();
    post(form, body, function () {
      input.value = text;
    }).then(done, done);
  }

  // Post `body` as `posting` (a form of the page) would, and show the answer; without one (the
  // network), post the form itself, which shows what happened.
  function post(posting, body, restore) {
    var number = ++sent;
    return fetch(posting.action, { method: "POST", body: body, credentials: "same-origin" })
      .then(function (response) {
        return response.text().then(function (html) {
          if (number !== sent) return;
          // Signed out meanwhile, or refused (403): the page as the browser would show it.
          if (!response.ok || !show(html)) window.location.assign(response.url);
        });
      })
      .catch(function () {
        restore();
        posting.submit();
      });
  }

  // A group's answer to "how many arrived?", sent as a scan is.
  document.addEventListener("submit", function (event) {
    var asked = event.target.closest("form.arrivals");
    if (!asked || !window.fetch || !window.DOMParser) return;
    event.preventDefault();
    var body = new FormData(asked);
    input.focus();
    post(asked, body, function () {});
  });

  form.addEventListener("submit", function (event) {
    if (!window.fetch || !window.DOMParser) return;
    event.preventDefault();
    if (input.value.trim()) send(input.value);
  });

  // The camera: frames drawn on a canvas and read by jsQR (tickets/static/tickets/vendor).
  var camera = document.getElementById("camera");
  var video = document.getElementById("camera-video");
  var start = document.getElementById("camera-start");
  var stop = document.getElementById("camera-stop");
  // Its words come from the page, in the staff member's language.
  var status = document.getElementById("camera-status");
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia || !window.jsQR) return;
  camera.hidden = false;
  var stream = null;
  var canvas = document.createElement("canvas");
  var context = canvas.getContext("2d", { willReadFrequently: true });
  var busy = false; // a scan is on its way: the next waits for its answer
  var held = ""; // the code in view: scanned once, and again only after it left the view
  var heldUntil = 0;
  var EVERY = 150; // ms between frames read: a phone reads a code in a few without running hot
  var LEFT_VIEW = 2000; // ms without a code before the same code scans again

  function read() {
    if (!stream) return;
    if (video.readyState >= video.HAVE_CURRENT_DATA && !busy) {
      // At most 640 pixels wide: a ticket's code is legible, and decoding stays quick.
      var scale = Math.min(1, 640 / video.videoWidth);
      canvas.width = Math.round(video.videoWidth * scale);
      canvas.height = Math.round(video.videoHeight * scale);
      context.drawImage(video, 0, 0, canvas.width, canvas.height);
      var frame = context.getImageData(0, 0, canvas.width, canvas.height);
      var code = window.jsQR(frame.data, frame.width, frame.height, {
        inversionAttempts: "dontInvert",
      });
      var now = Date.now();
      camera.dataset.frames = String(Number(camera.dataset.frames || 0) + 1); // frames read
      if (code && code.data) {
        if (code.data !== held || now > heldUntil) {
          busy = true;
          status.textContent = status.dataset.checking;
          send(code.data, function () {
            busy = false;
            status.textContent = status.dataset.next;
          });
        }
        held = code.data;
        heldUntil = now + LEFT_VIEW;
      }
    }
    window.setTimeout(read, EVERY);
  }

  start.addEventListener("click", function () {
    wakeAudio();
    status.textContent = status.dataset.opening;
    navigator.mediaDevices
      .getUserMedia({ video: { facingMode: "environment" }, audio: false })
      .then(function (opened) {
        stream = opened;
        video.srcObject = stream;
        video.hidden = false;
        document.body.classList.add("camera-on");
        start.hidden = true;
        stop.hidden = false;
        status.textContent = status.dataset.point;
        return video.play().then(read);
      })
      .catch(function (error) {
        status.textContent = status.dataset.failed + " (" + error.name + ")";
      });
  });

  stop.addEventListener("click", function () {
    if (stream) stream.getTracks().forEach(function (track) { track.stop(); });
    stream = null;
    video.srcObject = null;
    video.hidden = true;
    document.body.classList.remove("camera-on");
    stop.hidden = true;
    start.hidden = false;
    status.textContent = "";
    input.focus();
  });
})();
