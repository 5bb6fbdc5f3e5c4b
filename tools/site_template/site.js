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

  // search: every word must appear in a page (its title, headings or text) or in one of its sections (a heading and the
  // prose under it, reached at its anchor); title and heading hits rank first, and a page gives at most three sections
  const input = $('tb-search'), out = $('tb-results'), pages = window.TB_SEARCH || [];
  const has = (text, words) => words.every(w => text.includes(w));
  const score = (words, strong, weak) => words.reduce((s, w) => s + (strong.includes(w) ? 10 : 0) + (weak.includes(w) ? 3 : 0) + 1, 0);
  function search(q) {
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) return [];
    const hits = [];
    for (const p of pages) {
      const title = p.title.toLowerCase(), heads = p.headings.join(' \n ').toLowerCase();
      if (has(title + ' ' + heads + ' ' + p.text.toLowerCase(), words)) {
        const head = p.headings.find(hh => words.some(w => hh.toLowerCase().includes(w))) || '';
        hits.push({ url: p.url, title: p.title, note: head || p.summary, score: score(words, title, heads) + 0.5 });
      }
      const secs = [];
      for (const s of p.sections || []) {
        const head = s.head.toLowerCase();
        if (!has(title + ' ' + head + ' ' + s.text.toLowerCase(), words)) continue;
        secs.push({ url: p.url + '#' + encodeURIComponent(s.id), title: p.title + ' › ' + s.head,
                    note: s.text.slice(0, 140), score: score(words, head, title) });
      }
      hits.push(...secs.sort((a, b) => b.score - a.score).slice(0, 3));
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, 15);
  }
  function show() {
    const hits = search(input.value);
    out.replaceChildren(...hits.map(h => {
      const li = document.createElement('li'), a = document.createElement('a'), small = document.createElement('small');
      a.href = h.url; a.textContent = h.title; small.textContent = h.note;
      li.append(a, small); return li;
    }));
    if (input.value.trim() && !hits.length) { const li = document.createElement('li'); li.textContent = 'Nothing found.'; out.append(li); }
    out.hidden = !input.value.trim();
  }
  input.addEventListener('input', show);
  input.addEventListener('keydown', e => { if (e.key === 'Escape') { input.value = ''; show(); } if (e.key === 'Enter') { const a = out.querySelector('a'); if (a) location.href = a.href; } });
  document.addEventListener('click', e => { if (!e.target.closest('.tb-search')) out.hidden = true; });
})();
