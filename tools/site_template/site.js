// The offline docs site's behaviour (tools/build_docs.py): the menu on narrow screens, the page's contents, and search over
// window.TB_SEARCH (search.js, written by the build: no request, works from file:// too). Text goes in as text, never markup.
'use strict';
(function () {
  const $ = id => document.getElementById(id);
  const menu = $('tb-menu'), side = $('tb-side');
  menu.addEventListener('click', () => { const open = side.classList.toggle('open'); menu.setAttribute('aria-expanded', String(open)); });

  // the page's contents: its h2 and h3 headings (nbconvert gives each an id)
  const toc = $('tb-toc');
  for (const hd of document.querySelectorAll('main h2[id], main h3[id]')) {
    const li = document.createElement('li'), a = document.createElement('a');
    li.className = hd.tagName.toLowerCase();
    a.href = '#' + encodeURIComponent(hd.id);
    a.textContent = hd.textContent.replace(/¶\s*$/, '').trim();
    li.append(a); toc.append(li);
  }
  if (!toc.children.length) document.querySelector('.tb-toc').hidden = true;

  // search: every word must appear in a page's title, headings or text; title and heading hits rank first
  const input = $('tb-search'), out = $('tb-results'), pages = window.TB_SEARCH || [];
  function search(q) {
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return [];
    const hits = [];
    for (const p of pages) {
      const title = p.title.toLowerCase(), heads = p.headings.join(' \n ').toLowerCase(), all = title + ' ' + heads + ' ' + p.text.toLowerCase();
      if (!words.every(w => all.includes(w))) continue;
      const score = words.reduce((s, w) => s + (title.includes(w) ? 10 : 0) + (heads.includes(w) ? 3 : 0) + 1, 0);
      const head = p.headings.find(hh => words.some(w => hh.toLowerCase().includes(w))) || '';
      hits.push({ p, score, head });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, 12);
  }
  function show() {
    const hits = search(input.value);
    out.replaceChildren(...hits.map(({ p, head }) => {
      const li = document.createElement('li'), a = document.createElement('a'), small = document.createElement('small');
      a.href = p.url; a.textContent = p.title; small.textContent = head || p.summary;
      li.append(a, small); return li;
    }));
    if (input.value.trim() && !hits.length) { const li = document.createElement('li'); li.textContent = 'Nothing found.'; out.append(li); }
    out.hidden = !input.value.trim();
  }
  input.addEventListener('input', show);
  input.addEventListener('keydown', e => { if (e.key === 'Escape') { input.value = ''; show(); } if (e.key === 'Enter') { const a = out.querySelector('a'); if (a) location.href = a.href; } });
  document.addEventListener('click', e => { if (!e.target.closest('.tb-search')) out.hidden = true; });
})();
