// item pages: click the picture to zoom
document.addEventListener("click", e => {
  if (e.target.tagName === "IMG" && e.target.width === 400) e.target.classList.toggle("zoom");
});
