"""The page of `GET /`: type a sentence, see its translation and attention heatmap."""

# The page of `GET /`: one form, the translation, and the attention as a table of shaded
# cells (rows: target tokens, columns: source tokens), with no other files or libraries.
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>zoo translator</title>
<style>
body { font-family: sans-serif; margin: 2em; max-width: 60em; }
textarea { width: 100%; font-size: 1.1em; }
#translation { font-size: 1.3em; margin: 1em 0; }
table { border-collapse: collapse; font-size: 0.8em; }
td { width: 2.2em; height: 1.6em; border: 1px solid #eee; text-align: center; }
th { font-weight: normal; padding: 0 0.3em; white-space: nowrap; }
th.source { writing-mode: vertical-rl; transform: rotate(180deg); }
#error { color: #b00; }
</style></head>
<body>
<h1>zoo translator</h1>
<form id="form"><textarea id="text" rows="3" placeholder="Type a sentence"></textarea>
<p><button type="submit">Translate</button></p></form>
<div id="translation"></div><div id="error"></div>
<table id="heatmap"></table>
<script>
function cell(tag, text, cls) {
  const node = document.createElement(tag);
  node.textContent = text;
  if (cls) node.className = cls;
  return node;
}
function draw(entry) {
  const table = document.getElementById("heatmap");
  table.replaceChildren();
  const head = document.createElement("tr");
  head.appendChild(cell("th", ""));
  for (const s of entry.source_tokens) head.appendChild(cell("th", s, "source"));
  table.appendChild(head);
  entry.target_tokens.forEach((t, i) => {
    const row = document.createElement("tr");
    row.appendChild(cell("th", t));
    entry.weights[i].forEach((w) => {
      const td = cell("td", "");
      td.title = w.toFixed(3);
      td.style.background = "rgba(20, 60, 160, " + w + ")";
      row.appendChild(td);
    });
    table.appendChild(row);
  });
}
async function translate(text) {
  document.getElementById("error").textContent = "";
  const response = await fetch("/translate", {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({sentences: [text], attention: true}),
  });
  const body = await response.json();
  if (!response.ok) {
    document.getElementById("error").textContent = body.error;
    return;
  }
  document.getElementById("translation").textContent = body.translations[0];
  draw(body.attention[0]);
  document.body.dataset.done = "yes";
}
document.getElementById("form").addEventListener("submit", (event) => {
  event.preventDefault();
  translate(document.getElementById("text").value);
});
const q = new URLSearchParams(location.search).get("q");
if (q) { document.getElementById("text").value = q; translate(q); }
</script>
</body></html>
"""
