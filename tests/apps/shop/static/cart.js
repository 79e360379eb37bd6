// the cart: confirm before checking out
document.addEventListener("submit", e => {
  if (e.target.action.endsWith("/checkout") && !confirm("Place the order?")) e.preventDefault();
});
