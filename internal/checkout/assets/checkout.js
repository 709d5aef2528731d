// Paygate hosted checkout: progressive enhancement of a form that works
// without JavaScript. It shows the chosen method's fields, asks for the
// customer fields the typed card's network needs, checks the card inline
// (Luhn, expiry), and adds the browser's device snapshot on submit.
(function () {
  "use strict";
  var doc = document;
  var started = new Date().toISOString();
  var form = doc.querySelector("form[data-checkout]");
  var summary = doc.querySelector("[data-error-summary]");
  if (summary && !summary.hidden) { summary.focus(); }
  if (!form) { return; }

  var el = function (name) { return form.elements[name]; };
  var all = function (sel, root) { return Array.prototype.slice.call((root || doc).querySelectorAll(sel)); };
  var digits = function (s) { return String(s || "").replace(/\D/g, ""); };
  var names = { visa: "Visa", mastercard: "Mastercard", amex: "Amex", mir: "Mir" };
  var wallets = { apple_pay: 1, google_pay: 1, samsung_pay: 1 };

  function schemeOf(n) {
    var p2 = +n.slice(0, 2), p4 = +n.slice(0, 4);
    if (/^4/.test(n)) { return "visa"; }
    if ((n.length >= 2 && p2 >= 51 && p2 <= 55) || (n.length >= 4 && p4 >= 2221 && p4 <= 2720)) { return "mastercard"; }
    if (/^3[47]/.test(n)) { return "amex"; }
    if (n.length >= 4 && p4 >= 2200 && p4 <= 2204) { return "mir"; }
    return "";
  }

  function luhn(n) {
    var sum = 0, alt = false;
    for (var i = n.length - 1; i >= 0; i--) {
      var d = n.charCodeAt(i) - 48;
      if (alt) { d *= 2; if (d > 9) { d -= 9; } }
      sum += d; alt = !alt;
    }
    return n.length >= 12 && n.length <= 19 && sum % 10 === 0;
  }

  function method() {
    var m = form.querySelector("input[name=method]:checked") || el("method");
    return m ? m.value : "card";
  }

  function savedCard() {
    var s = form.querySelector("input[name=saved_card_id]:checked");
    return method() === "card" && s && s.value ? s : null;
  }

  function enable(box, on) {
    box.hidden = !on;
    all("input, select", box).forEach(function (i) { i.disabled = !on; });
  }

  // update shows what the chosen method and the card's network need.
  function update() {
    var m = method(), saved = savedCard(), number = el("number");
    all("[data-panel]").forEach(function (p) {
      enable(p, p.getAttribute("data-panel") === (wallets[m] ? "wallet" : m));
    });
    var fresh = form.querySelector("[data-new-card]");
    if (fresh && m === "card") { enable(fresh, !saved); }
    var typed = number && !number.disabled ? digits(number.value) : "";
    var scheme = m !== "card" ? "" : saved ? saved.getAttribute("data-scheme") : typed ? schemeOf(typed) : (form.getAttribute("data-last-scheme") || "");
    var shown = 0;
    all("[data-for]").forEach(function (f) {
      var on = (" " + f.getAttribute("data-for") + " ").indexOf(" " + scheme + " ") >= 0 || !!f.querySelector("[aria-invalid=true]");
      enable(f, on);
      if (on) { shown++; }
    });
    var billing = form.querySelector("[data-billing]");
    if (billing) { billing.hidden = shown === 0; }
    var badge = form.querySelector("[data-brand]");
    if (badge) {
      var brand = typed ? names[schemeOf(typed)] : "";
      badge.textContent = brand || "";
      badge.hidden = !brand;
    }
  }

  // formatNumber groups the digits by four as the payer types, keeping
  // the caret after the same digit.
  function formatNumber(input) {
    var before = digits(input.value.slice(0, input.selectionStart || 0)).length;
    var d = digits(input.value).slice(0, 19);
    var out = d.replace(/(\d{4})(?=\d)/g, "$1 ");
    if (out === input.value) { return; }
    input.value = out;
    var pos = 0, seen = 0;
    while (pos < out.length && seen < before) { if (/\d/.test(out[pos])) { seen++; } pos++; }
    input.setSelectionRange(pos, pos);
  }

  function fullYear(y) { y = +y; return y < 100 ? 2000 + y : y; }

  // check returns the message for a field, or "" when it is fine.
  function check(name) {
    var f = el(name);
    if (!f || f.disabled || f.type === "hidden") { return ""; }
    var v = String(f.value || "").trim(), now = new Date();
    switch (name) {
    case "number":
      if (!v) { return "Enter your card number."; }
      return luhn(digits(v)) ? "" : "Check the card number: it is not valid.";
    case "expire_month":
      return /^\d{1,2}$/.test(v) && +v >= 1 && +v <= 12 ? "" : "Enter the expiry month, 1 to 12.";
    case "expire_year":
      if (!/^(\d{2}|\d{4})$/.test(v)) { return "Enter the expiry year, e.g. " + (now.getFullYear() + 2) + "."; }
      var m = +((el("expire_month") || {}).value || 0), y = fullYear(v);
      return y < now.getFullYear() || (y === now.getFullYear() && m >= 1 && m < now.getMonth() + 1) ? "The card has expired." : "";
    case "cvv":
      return /^\d{3,4}$/.test(v) ? "" : "Enter the 3 or 4 digit security code.";
    case "email":
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v) ? "" : "Enter an email address like name@example.com.";
    case "first_name": return v ? "" : "Enter your first name.";
    case "last_name": return v ? "" : "Enter your last name.";
    case "line1": return v ? "" : "Enter the first line of your billing address.";
    case "country": return /^[A-Za-z]{2}$/.test(v) ? "" : "Choose your country.";
    case "phone":
      return /^\+[1-9]\d{7,14}$/.test(v.replace(/[\s\-()]/g, "")) ? "" : "Enter the number in international format, e.g. +1 202 555 0100.";
    case "consent":
      return f.checked ? "" : "Tick the box to agree to the recurring payments.";
    }
    return "";
  }

  function setError(name, message) {
    var f = el(name);
    if (!f) { return; }
    var box = f.closest(".field") || f.parentNode, id = name + "-error";
    var p = doc.getElementById(id);
    var ids = (f.getAttribute("aria-describedby") || "").split(" ").filter(function (x) { return x && x !== id; });
    if (message) {
      if (!p) { p = doc.createElement("p"); p.className = "field-error"; p.id = id; box.appendChild(p); }
      p.textContent = message;
      ids.push(id);
      f.setAttribute("aria-invalid", "true");
    } else {
      if (p) { p.parentNode.removeChild(p); }
      f.removeAttribute("aria-invalid");
    }
    if (ids.length) { f.setAttribute("aria-describedby", ids.join(" ")); } else { f.removeAttribute("aria-describedby"); }
  }

  function showSummary(errors) {
    if (!summary) { return; }
    var list = summary.querySelector("ul");
    list.textContent = "";
    errors.forEach(function (e) {
      var li = doc.createElement("li"), a = doc.createElement("a");
      a.href = "#" + e.name; a.textContent = e.message;
      a.addEventListener("click", function (ev) { ev.preventDefault(); el(e.name).focus(); });
      li.appendChild(a); list.appendChild(li);
    });
    summary.hidden = errors.length === 0;
    if (errors.length) { summary.focus(); }
  }

  var checked = ["number", "expire_month", "expire_year", "cvv", "first_name", "last_name", "email", "country", "line1", "phone", "consent"];

  // device gathers every DeviceSnapshot field the browser tells; the
  // server adds accept_header and user_agent from the request itself.
  function device() {
    var d = { javascript_enabled: true }, nav = navigator, s = window.screen || {};
    var num = function (k, v) { if (typeof v === "number" && isFinite(v)) { d[k] = v; } };
    var str = function (k, v, max) { if (typeof v === "string" && v) { d[k] = v.slice(0, max); } };
    num("color_depth", s.colorDepth); num("screen_width", s.width); num("screen_height", s.height);
    num("viewport_width", window.innerWidth); num("viewport_height", window.innerHeight);
    num("device_pixel_ratio", window.devicePixelRatio);
    num("utc_offset", -new Date().getTimezoneOffset());
    num("max_touch_points", nav.maxTouchPoints);
    str("language", nav.language, 32);
    if (nav.languages && nav.languages.length) {
      d.languages = Array.prototype.slice.call(nav.languages, 0, 10).map(function (l) { return String(l).slice(0, 32); });
    }
    try { str("timezone", Intl.DateTimeFormat().resolvedOptions().timeZone, 128); } catch (e) { /* no Intl */ }
    str("platform", (nav.userAgentData && nav.userAgentData.platform) || nav.platform, 128);
    d.touch_enabled = "ontouchstart" in window || (nav.maxTouchPoints || 0) > 0;
    d.cookie_enabled = !!nav.cookieEnabled;
    d.online = nav.onLine !== false;
    try { if (doc.referrer) { str("referrer_origin", new URL(doc.referrer).origin, 128); } } catch (e) { /* opaque */ }
    d.session_started_at = started;
    d.client_timestamp = new Date().toISOString();
    return JSON.stringify(d);
  }

  // countries turns the two-letter country box into a list of names.
  function countries() {
    var input = el("country");
    if (!input || !input.getAttribute("data-countries") || !window.Intl || !Intl.DisplayNames) { return; }
    var dn = new Intl.DisplayNames(["en"], { type: "region" });
    var select = doc.createElement("select");
    ["id", "name", "autocomplete", "aria-describedby", "aria-invalid", "required", "aria-required"].forEach(function (a) {
      if (input.hasAttribute(a)) { select.setAttribute(a, input.getAttribute(a)); }
    });
    var rows = input.getAttribute("data-countries").split(" ").map(function (c) { return [c, dn.of(c) || c]; });
    rows.sort(function (a, b) { return a[1].localeCompare(b[1]); });
    var blank = doc.createElement("option");
    blank.value = ""; blank.textContent = "Choose a country";
    select.appendChild(blank);
    rows.forEach(function (r) {
      var o = doc.createElement("option");
      o.value = r[0]; o.textContent = r[1];
      o.selected = r[0] === input.value.toUpperCase();
      select.appendChild(o);
    });
    select.disabled = input.disabled;
    input.parentNode.replaceChild(select, input);
    var hint = doc.getElementById("country-hint");
    if (hint) { hint.hidden = true; }
  }

  countries();
  form.addEventListener("change", update);
  form.addEventListener("input", function (ev) {
    if (ev.target.name === "number") { formatNumber(ev.target); }
    if (ev.target.getAttribute("aria-invalid") && !check(ev.target.name)) { setError(ev.target.name, ""); }
    update();
  });
  form.addEventListener("focusout", function (ev) {
    var name = ev.target.name;
    if (checked.indexOf(name) >= 0 && name !== "consent" && String(ev.target.value || "").trim()) { setError(name, check(name)); }
  });
  form.addEventListener("submit", function (ev) {
    var errors = [];
    checked.forEach(function (name) {
      var message = check(name);
      setError(name, message);
      if (message) { errors.push({ name: name, message: message }); }
    });
    var pay = form.querySelector("[data-pay]");
    if (errors.length || (pay && pay.getAttribute("aria-disabled") === "true")) {
      ev.preventDefault();
      showSummary(errors);
      return;
    }
    showSummary([]);
    form.querySelector("[data-device]").value = device();
    if (pay) { pay.setAttribute("aria-disabled", "true"); pay.textContent = "Processing…"; }
  });
  window.addEventListener("pageshow", function (ev) {
    var pay = form.querySelector("[data-pay]");
    if (ev.persisted && pay) { pay.removeAttribute("aria-disabled"); pay.textContent = pay.getAttribute("data-label") || pay.textContent; }
  });
  var payButton = form.querySelector("[data-pay]");
  if (payButton) { payButton.setAttribute("data-label", payButton.textContent); }
  update();
})();
