"""Stylesheet and script of the HTML report (written next to index.html; no network, no framework).

The script does three things: sortable tables (click a header), row filters (category, configuration,
averaging set) and the synchronised player of a task page: one play/pause, a scrubber, frame stepping
(buttons and the arrow keys), playback speed, and the task's timed events as markers on the timeline.
"""

CSS = r"""
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2330;--mute:#667085;--line:#e3e6eb;--acc:#2f6fde;--ok:#137a3a;--bad:#b42318;--warn:#b54708}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg);margin:0}
header.top{background:#18202f;color:#fff;padding:14px 28px;display:flex;gap:24px;align-items:baseline;flex-wrap:wrap}
header.top a{color:#cfe0ff;text-decoration:none}header.top h1{font-size:20px;margin:0}
main{max-width:1480px;margin:0 auto;padding:18px 28px 60px}
h2{font-size:18px;margin:26px 0 8px}h3{font-size:15px;margin:18px 0 6px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin:12px 0}
.muted{color:var(--mute)}.small{font-size:12px}
table{border-collapse:collapse;width:100%;background:var(--card)}
.tw{overflow-x:auto;max-width:100%}
th,td{border-bottom:1px solid var(--line);padding:4px 6px;text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
th{background:#eef1f5;font-weight:600}th.sortable{cursor:pointer;user-select:none}
th.sortable:after{content:" \2195";color:#98a2b3;font-size:11px}th.asc:after{content:" \25B2"}th.desc:after{content:" \25BC"}
td.l,th.l{text-align:left}td.wrap{white-space:normal}
td small,.n{color:var(--mute);font-size:11px;margin-left:3px}
.bar{display:inline-block;height:6px;background:var(--acc);border-radius:3px;vertical-align:middle;margin-left:6px;opacity:.55}
.pill{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;border:1px solid var(--line);background:#f2f4f7}
.pass{color:var(--ok);font-weight:600}.fail{color:var(--bad);font-weight:600}.undet{color:var(--warn);font-weight:600}
.filters{display:flex;gap:16px;align-items:center;flex-wrap:wrap;margin:8px 0}
.filters label{font-size:13px;color:var(--mute)}select{font:inherit;padding:2px 4px}
img.plot{max-width:100%;border:1px solid var(--line);border-radius:6px;background:#fff}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:14px}@media(max-width:900px){.grid2{grid-template-columns:1fr}}
.tasks{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:12px}
.tasks .card{margin:0}.tasks img{width:100%;border-radius:4px}
.sync .videos{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:10px}
.sync figure{margin:0;background:#0d1117;border-radius:6px;overflow:hidden}
.sync figcaption{color:#e6edf3;font-size:12px;padding:4px 8px;display:flex;justify-content:space-between}
.sync video{width:100%;display:block;aspect-ratio:16/9;background:#000}
.sync .nov{color:#e6edf3;aspect-ratio:16/9;display:flex;align-items:center;justify-content:center;font-size:13px;padding:10px;text-align:center}
.controls{display:flex;gap:8px;align-items:center;margin:10px 0 4px;flex-wrap:wrap}
.controls button{font:inherit;padding:3px 10px;border:1px solid var(--line);border-radius:5px;background:#fff;cursor:pointer}
.controls .time{font-variant-numeric:tabular-nums;min-width:150px}
.timeline{position:relative;height:46px;margin:4px 0 0}
.timeline input[type=range]{position:absolute;left:0;right:0;top:0;width:100%;margin:0}
.timeline .ev{position:absolute;top:22px;height:18px;background:#f4c43055;border-left:2px solid #d69e00;font-size:11px;
  padding:0 4px;overflow:hidden;white-space:nowrap;cursor:pointer;border-radius:0 3px 3px 0}
.timeline .ev.key{background:#f0444433;border-left-color:#b42318}
.timeline .fm{position:absolute;top:15px;width:3px;height:8px;background:#b42318;cursor:pointer}
details{margin:4px 0}summary{cursor:pointer;color:var(--acc)}
pre{background:#f2f4f7;padding:8px;border-radius:5px;overflow:auto;max-height:320px;font-size:12px}
.finding{border-left:3px solid var(--bad);padding-left:10px;margin:10px 0}
.kind{margin-top:14px}.kind h4{margin:6px 0;font-size:14px}
.stills{display:flex;gap:10px;flex-wrap:wrap}.stills img{max-width:420px;width:100%;border-radius:4px;border:1px solid var(--line)}
a{color:var(--acc)}
"""

JS = r"""
(function(){
'use strict';
function num(td){var v=td.getAttribute('data-v');if(v===null)return null;if(v==='')return -Infinity;var x=parseFloat(v);return isNaN(x)?v:x;}
document.querySelectorAll('table.sortable').forEach(function(t){
  t.querySelectorAll('th.sortable').forEach(function(th,idx){
    th.addEventListener('click',function(){
      var col=Array.prototype.indexOf.call(th.parentNode.children,th);
      var asc=!th.classList.contains('desc')&&th.classList.contains('asc')?false:!th.classList.contains('asc');
      t.querySelectorAll('th').forEach(function(h){h.classList.remove('asc','desc');});
      th.classList.add(asc?'asc':'desc');
      var body=t.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){var x=num(a.cells[col]),y=num(b.cells[col]);
        if(x===null)x=a.cells[col].textContent;if(y===null)y=b.cells[col].textContent;
        if(typeof x==='number'&&typeof y==='number')return asc?x-y:y-x;
        return asc?String(x).localeCompare(String(y)):String(y).localeCompare(String(x));});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
function applyFilters(){
  var f={};document.querySelectorAll('select[data-filter]').forEach(function(s){f[s.getAttribute('data-filter')]=s.value;});
  document.querySelectorAll('[data-row]').forEach(function(el){
    var show=true;for(var k in f){var v=el.getAttribute('data-'+k);if(f[k]&&v!==null&&v!==f[k])show=false;
      var e=el.getAttribute('data-'+k+'-eq');if(e!==null&&e!==f[k])show=false;}
    el.style.display=show?'':'none';});
}
document.querySelectorAll('select[data-filter]').forEach(function(s){s.addEventListener('change',applyFilters);});
applyFilters();
document.querySelectorAll('.sync').forEach(function(box){
  var vids=Array.prototype.slice.call(box.querySelectorAll('video'));
  var fps=parseFloat(box.getAttribute('data-fps'))||30, dur=parseFloat(box.getAttribute('data-duration'))||8;
  var nf=Math.round(fps*dur);
  var range=box.querySelector('input[type=range]'), play=box.querySelector('.play'), time=box.querySelector('.time');
  var speed=box.querySelector('.speed');
  if(!vids.length){return;}
  var master=vids[0];
  function frame(){return Math.min(nf,Math.floor(master.currentTime*fps+1e-6)+1);}
  function show(){var f=frame();range.value=f;time.textContent='frame '+f+' / '+nf+'  ·  '+master.currentTime.toFixed(2)+' s';}
  function seekFrame(f){f=Math.max(1,Math.min(nf,f));var t=(f-0.5)/fps;vids.forEach(function(v){v.pause();v.currentTime=t;});
    play.textContent='▶ play';range.value=f;time.textContent='frame '+f+' / '+nf+'  ·  '+t.toFixed(2)+' s';}
  function tick(){
    vids.forEach(function(v){if(v!==master&&!v.paused&&Math.abs(v.currentTime-master.currentTime)>0.5/fps){v.currentTime=master.currentTime;}});
    show();if(!master.paused)requestAnimationFrame(tick);}
  play.addEventListener('click',function(){
    if(master.paused){if(master.ended||master.currentTime>=dur-1e-3){vids.forEach(function(v){v.currentTime=0;});}
      vids.forEach(function(v){v.playbackRate=parseFloat(speed.value);var p=v.play();if(p&&p.catch)p.catch(function(){});});
      play.textContent='❚❚ pause';requestAnimationFrame(tick);}
    else{vids.forEach(function(v){v.pause();});var t=master.currentTime;vids.forEach(function(v){v.currentTime=t;});play.textContent='▶ play';show();}
  });
  master.addEventListener('ended',function(){vids.forEach(function(v){v.pause();});play.textContent='▶ play';show();});
  box.querySelector('.prev').addEventListener('click',function(){seekFrame(frame()-1);});
  box.querySelector('.next').addEventListener('click',function(){seekFrame(frame()+1);});
  box.querySelector('.first').addEventListener('click',function(){seekFrame(1);});
  range.addEventListener('input',function(){seekFrame(parseInt(range.value,10));});
  speed.addEventListener('change',function(){vids.forEach(function(v){v.playbackRate=parseFloat(speed.value);});});
  box.querySelectorAll('[data-seek]').forEach(function(el){el.addEventListener('click',function(){seekFrame(parseInt(el.getAttribute('data-seek'),10));});});
  document.addEventListener('keydown',function(e){if(e.target.tagName==='INPUT'||e.target.tagName==='SELECT')return;
    if(e.key==='ArrowRight'){seekFrame(frame()+1);e.preventDefault();}else if(e.key==='ArrowLeft'){seekFrame(frame()-1);e.preventDefault();}
    else if(e.key===' '){play.click();e.preventDefault();}});
  master.addEventListener('loadedmetadata',show);
  window.pcgPlayers=(window.pcgPlayers||[]).concat([{videos:vids,seekFrame:seekFrame}]);
});
})();
"""
