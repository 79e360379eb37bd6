// search pages: keep the query in the box
document.addEventListener("DOMContentLoaded", () => {
  const q = new URLSearchParams(location.search).get("q");
  if (q) document.querySelector("input[name=q]").value = q;
});
