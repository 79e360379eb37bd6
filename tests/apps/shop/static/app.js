// the shop's common script: loads the related items a page announces (data-src, JSON)
document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("related");
  if (!box) return;
  fetch(box.dataset.src).then(r => r.json()).then(data => {
    box.innerHTML = data.items.map(i => `<a href="/item/${i.id}">${i.name}</a>`).join(" · ");
  });
});
