// overseer review page: records reviews through the JSON API. Everything from the server is inserted as text.
"use strict";
(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const who = document.getElementById("reviewer");
  who.value = localStorage.getItem("overseer.reviewer") || "";
  who.addEventListener("change", () => localStorage.setItem("overseer.reviewer", who.value.trim()));

  for (const form of document.querySelectorAll("form.review-form")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const label = event.submitter ? event.submitter.value : "";
      const result = form.querySelector(".result");
      const reviewer = who.value.trim();
      if (!reviewer) {
        result.textContent = "enter your name (top right) first";
        who.focus();
        return;
      }
      localStorage.setItem("overseer.reviewer", reviewer);
      const comment = form.querySelector(".comment").value;
      result.textContent = "saving...";
      let response;
      try {
        response = await fetch("/api/reviews", {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
          body: JSON.stringify({ step_id: form.dataset.stepId, label, comment, reviewer }),
        });
      } catch (err) {
        result.textContent = "not saved: " + err;
        return;
      }
      const body = await response.json().catch(() => ({}));
      if (!response.ok) {
        result.textContent = "not saved: " + (body.error || response.status);
        return;
      }
      const item = document.createElement("li");
      item.className = "review";
      const b = document.createElement("b");
      b.textContent = body.label;
      item.append(b, " by " + body.reviewer + " (just now)" + (body.comment ? ": " + body.comment : ""));
      form.parentElement.querySelector("ul.reviews").append(item);
      form.querySelector(".comment").value = "";
      result.textContent = "saved";
    });
  }
})();
