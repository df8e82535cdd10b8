// memstrata console: progressive enhancement only; every page works without this file.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // Forms that destroy ask once more (the server still requires what it requires).
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
  for (const link of document.querySelectorAll("a[data-back]")) {
    link.addEventListener("click", (event) => { event.preventDefault(); history.back(); });
  }
  // A page marked data-refresh="N" reloads its content every N seconds, in place, while visible.
  const live = document.querySelector("[data-refresh]");
  if (live) {
    const seconds = Number(live.dataset.refresh) || 5;
    const tick = async () => {
      if (document.visibilityState === "visible") {
        const reply = await fetch(location.href, { credentials: "same-origin" });
        if (reply.ok) {
          const next = new DOMParser().parseFromString(await reply.text(), "text/html");
          const fresh = next.querySelector("[data-refresh]");
          if (fresh) live.replaceChildren(...fresh.childNodes);
        }
      }
      setTimeout(tick, seconds * 1000);
    };
    setTimeout(tick, seconds * 1000);
  }
  // Keep the highlighted message of a session in view.
  const current = document.getElementById("current");
  if (current) current.scrollIntoView({ block: "center" });
});
