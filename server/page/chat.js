// archc chat page: streams /v1/chat/completions (server-sent events).
"use strict";
const $ = (id) => document.getElementById(id);
const history = [];
let controller = null;

function loadModel() {
  fetch("v1/models", { headers: headers() }).then((r) => r.json()).then((j) => {
    if (j.data && j.data[0]) $("model").textContent = j.data[0].id;
  }).catch(() => {});
}
loadModel();

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("apikey").value.trim();
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

function bubble(role, text, images) {
  const div = document.createElement("div");
  div.className = "msg " + role;
  for (const url of images || []) {
    const img = document.createElement("img");
    img.src = url;
    img.className = "thumb";
    div.appendChild(img);
  }
  div.appendChild(document.createTextNode(text));
  $("log").appendChild(div);
  div.scrollIntoView({ block: "end" });
  return div;
}

// Images attached to the next message, as data: URLs (a vision-language
// model's image_url parts): from the file picker or pasted.
const attached = [];
function attach(file) {
  if (!file || !file.type.startsWith("image/")) return;
  const reader = new FileReader();
  reader.onload = () => {
    attached.push(reader.result);
    const img = document.createElement("img");
    img.src = reader.result;
    img.className = "thumb";
    $("attached").appendChild(img);
  };
  reader.readAsDataURL(file);
}
$("image").addEventListener("change", () => { for (const f of $("image").files) attach(f); $("image").value = ""; });
$("input").addEventListener("paste", (ev) => {
  for (const item of ev.clipboardData.items) if (item.kind === "file") attach(item.getAsFile());
});

function number(id) {
  const v = $(id).value.trim();
  return v === "" ? undefined : Number(v);
}

async function send(text) {
  const images = attached.splice(0);
  $("attached").textContent = "";
  const content = images.length === 0 ? text :
    [...images.map((url) => ({ type: "image_url", image_url: { url } })), { type: "text", text }];
  history.push({ role: "user", content });
  bubble("user", text, images);
  const out = bubble("assistant", "");
  const messages = [];
  const system = $("system").value.trim();
  if (system) messages.push({ role: "system", content: system });
  messages.push(...history);
  const body = {
    messages, stream: true, stream_options: { include_usage: true },
    temperature: number("temperature"), top_p: number("top_p"), top_k: number("top_k"),
    min_p: number("min_p"), max_tokens: number("max_tokens"), seed: number("seed"),
  };
  controller = new AbortController();
  $("send").disabled = true;
  $("stop").disabled = false;
  let answer = "", finish = "", usage = null;
  try {
    const resp = await fetch("v1/chat/completions", { method: "POST", headers: headers(), body: JSON.stringify(body), signal: controller.signal });
    if (!resp.ok) {
      const j = await resp.json().catch(() => ({}));
      throw new Error((j.error && j.error.message) || resp.statusText);
    }
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 2);
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data === "[DONE]") continue;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message);
        if (chunk.usage) usage = chunk.usage;
        if (chunk.model) $("model").textContent = chunk.model;
        for (const c of chunk.choices || []) {
          if (c.delta && c.delta.content) {
            answer += c.delta.content;
            out.textContent = answer;
            out.scrollIntoView({ block: "end" });
          }
          if (c.finish_reason) finish = c.finish_reason;
        }
      }
    }
  } catch (e) {
    if (e.name === "AbortError") finish = "stopped";
    else { out.classList.add("error"); out.textContent = answer + (answer ? "\n" : "") + "Error: " + e.message; }
  } finally {
    controller = null;
    $("send").disabled = false;
    $("stop").disabled = true;
  }
  history.push({ role: "assistant", content: answer });
  const meta = document.createElement("div");
  meta.className = "meta";
  meta.textContent = [finish && "finish: " + finish, usage && usage.completion_tokens + " tokens"].filter(Boolean).join(" · ");
  out.appendChild(meta);
}

$("form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("input").value.trim();
  if (!text || controller) return;
  $("input").value = "";
  send(text);
});
$("input").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); $("form").requestSubmit(); }
});
$("stop").addEventListener("click", () => controller && controller.abort());
$("apikey").addEventListener("change", loadModel);
$("clear").addEventListener("click", () => { history.length = 0; attached.length = 0; $("log").textContent = ""; $("attached").textContent = ""; });
