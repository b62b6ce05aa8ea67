// The namespace picker: switching namespace opens the same inspector in the chosen one.
(function () {
  var select = document.getElementById("ns-select");
  if (!select) return;
  select.addEventListener("change", function () {
    window.location.href = select.dataset.base + encodeURIComponent(select.value) + "/";
  });
})();
