// Service worker: the site works offline after the first load.
// The build writes the build id (a hash of every served file) and the precache list into this file, so a new
// build gets a new cache and the old one is dropped.
//   - precache on install: the page, the worker, Pyodide's core files, the lock, our wheel, the exercises;
//   - big versioned files (Pyodide's core and snapshot, wheels: ours by hash, numpy by Pyodide version): cache first;
//   - everything else of this site: network first, the cache when offline;
//   - /api/ (lab mode) and non-GET requests are never touched.
const CACHE = "minitriton-__BUILD_ID__";
const PRECACHE = __PRECACHE__;

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(PRECACHE)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("minitriton-") && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

const immutable = (url) => /\.(whl|wasm|zip|gz)$/.test(url.pathname) || /\/pyodide\/pyodide(\.mjs|\.asm\.js)$/.test(url.pathname);

async function cacheFirst(request) {
  const cache = await caches.open(CACHE);
  const hit = await cache.match(request, { ignoreSearch: true });
  if (hit) return hit;
  const response = await fetch(request);
  if (response.ok) cache.put(request, response.clone());
  return response;
}

async function networkFirst(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok) cache.put(request, response.clone());
    return response;
  } catch (e) {
    const hit = await cache.match(request, { ignoreSearch: true })
      || (request.mode === "navigate" ? await cache.match("./") : undefined);
    if (hit) return hit;
    throw e;
  }
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  const sameOrigin = url.origin === self.location.origin;
  if (sameOrigin && url.pathname.includes("/api/")) return;
  if (immutable(url)) { event.respondWith(cacheFirst(request)); return; }
  if (sameOrigin) event.respondWith(networkFirst(request));
});
