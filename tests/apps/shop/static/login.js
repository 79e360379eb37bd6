// the login form: focus the e-mail field
document.addEventListener("DOMContentLoaded", () => document.querySelector("input[name=email]").focus());
