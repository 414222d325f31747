// The report page's own script (no inline handlers: the Content-Security-Policy allows scripts
// from this site only). "select all" ticks every finding of the triage form; a form with
// data-confirm (Cancel run) asks first.
document.addEventListener("change", function (event) {
  if (event.target.id !== "qa-select-all") return;
  document.querySelectorAll("#qa-triage input[name=finding]").forEach(function (box) {
    box.checked = event.target.checked;
  });
});

document.addEventListener("submit", function (event) {
  var question = event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
