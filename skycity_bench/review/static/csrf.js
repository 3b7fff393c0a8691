// Every POST form of a signed-in page carries the session's CSRF token (review/auth.py);
// forms written without the hidden field get it here, before they can be submitted.
document.addEventListener("DOMContentLoaded", () => {
  const t = document.querySelector("meta[name=csrf-token]").content;
  for (const f of document.querySelectorAll("form[method=post]")) {
    if (!f.querySelector("input[name=csrf]")) {
      const i = document.createElement("input");
      i.type = "hidden"; i.name = "csrf"; i.value = t; f.prepend(i);
    }
  }
});
