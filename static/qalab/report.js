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

// "does not fail the gate" only goes with won't fix / false positive (the server refuses it with
// any other state): the box is off and disabled until one of those two is chosen.
function qaSyncGateOption(form) {
  var state = form.querySelector("select[name=state]");
  var gate = form.querySelector("input[name=gate_waived]");
  if (!state || !gate) return;
  var waivable = state.value === "wont_fix" || state.value === "false_positive";
  gate.disabled = !waivable;
  if (!waivable) gate.checked = false;
}

function qaSyncAllGateOptions() {
  document.querySelectorAll("form").forEach(qaSyncGateOption);
}

document.addEventListener("change", function (event) {
  if (event.target.name === "state" && event.target.form) qaSyncGateOption(event.target.form);
});
document.addEventListener("DOMContentLoaded", qaSyncAllGateOptions);
document.addEventListener("htmx:afterSettle", qaSyncAllGateOptions);

// Case page, "Missed by the judge": words selected in a turn fill the form's quote and turn; a
// rule picked sets its usual severity (the reviewer may change it). The server checks the quote.
function qaMissedForm() {
  return document.getElementById("qa-missed-form");
}

function qaFillMissedFromSelection() {
  var form = qaMissedForm();
  var selection = window.getSelection();
  if (!form || !selection || selection.isCollapsed || !selection.rangeCount) return;
  var node = selection.getRangeAt(0).commonAncestorContainer;
  var element = node.nodeType === 1 ? node : node.parentElement;
  var turn = element && element.closest(".qa-turn-text");
  var text = selection.toString().trim();
  if (!turn || !text) return;
  form.querySelector("textarea[name=quote]").value = text.slice(0, 500);
  form.querySelector("select[name=turn_index]").value = turn.getAttribute("data-turn");
}

document.addEventListener("mouseup", qaFillMissedFromSelection);
document.addEventListener("keyup", function (event) {
  if (event.shiftKey) qaFillMissedFromSelection();
});
document.addEventListener("change", function (event) {
  var form = qaMissedForm();
  if (!form || event.target.form !== form || event.target.name !== "rule_id") return;
  var severity = event.target.selectedOptions[0].getAttribute("data-severity");
  if (severity) form.querySelector("select[name=severity]").value = severity;
});
