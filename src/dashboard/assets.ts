/**
 * The dashboard's only assets, served by its handler (no CDN, works offline): a
 * stylesheet and a script of a few KB, plain CSS and JavaScript. The pages work
 * without the script (forms post and redirect); it adds live updates and relative
 * times. Both are served under a content hash, so browsers cache them for good.
 */
import { createHash } from 'node:crypto';

export const STYLE = `
:root{--fg:#1d2430;--muted:#5b6577;--line:#dde2ea;--bg:#f6f7f9;--card:#fff;--ok:#1f8a4c;--fail:#c23b3b;--run:#2463c9;--wait:#b7791f;--off:#8a93a3}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;align-items:center;gap:16px;padding:10px 20px;background:#111827;color:#fff}
header a{color:#fff;text-decoration:none;font-weight:600}
header .live{margin-left:auto;font-size:12px;color:#9ca3af}
header .live::before{content:"";display:inline-block;width:8px;height:8px;border-radius:50%;background:#6b7280;margin-right:6px}
html[data-live=sse] header .live::before{background:#22c55e}
html[data-live=poll] header .live::before{background:#eab308}
main{padding:16px 20px;max-width:1400px}
h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:20px 0 8px}h2.first{margin-top:0}
a{color:var(--run)}
table{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line)}
th,td{padding:6px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;background:#fafbfc;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}h1 code{font-size:18px}
pre{background:#f0f2f5;padding:8px;border-radius:4px;white-space:pre-wrap;word-break:break-word;margin:0}
.muted{color:var(--muted)}.small{font-size:12px}
.badge{display:inline-block;padding:1px 7px;border-radius:10px;font-size:12px;color:#fff;background:var(--off)}
.s-succeeded{background:var(--ok)}.s-failed{background:var(--fail)}.s-running{background:var(--run)}.s-pending{background:var(--wait)}.s-cancelled{background:var(--off)}
.s-suspended{background:var(--wait)}.s-active{background:var(--ok)}
.strip{display:flex;gap:2px}.strip a{display:block;width:10px;height:16px;border-radius:2px}
.dst{font-size:11px;padding:0 5px;border-radius:8px;background:#fde68a;color:#713f12}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;background:var(--card);border:1px solid var(--line);padding:12px;margin:0}
dt{color:var(--muted)}dd{margin:0}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:16px}
.actions{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
form.card{background:var(--card);border:1px solid var(--line);padding:10px;display:flex;flex-direction:column;gap:6px}
textarea,input[type=text]{font:12px ui-monospace,monospace;padding:4px;border:1px solid var(--line);border-radius:3px;min-width:220px}
button{font:inherit;padding:4px 12px;border:1px solid #1f4fa0;background:var(--run);color:#fff;border-radius:3px;cursor:pointer}
button.secondary{background:#fff;color:var(--fg);border-color:var(--line)}
.notice{padding:8px 12px;border-radius:4px;margin-bottom:12px;background:#e7f5ec;border:1px solid #b7e1c6}
.notice.error{background:#fdecec;border-color:#f3c0c0}
.toolbar{display:flex;gap:12px;align-items:center;margin-bottom:10px}
.pager{display:flex;gap:8px;margin-top:8px}
`;

/**
 * The page script. It reads what to watch from `<body data-*>`: on a `change`
 * event that concerns the page (or, without events, every `data-poll` ms) it
 * fetches the page again and swaps the `[data-live]` regions, never the forms, so
 * what the user is typing stays. Refreshes are spaced at least 250 ms apart and
 * never overlap. Server markup is already escaped; nothing is built from strings.
 */
export const SCRIPT = `(function(){'use strict';
var body=document.body,d=body.dataset,root=document.documentElement;
var job=d.watchJob||'',run=d.watchRun||'',poll=Number(d.poll)||5000;
var busy=false,again=false,last=0,lastChange=Date.now(),refreshes=0;
function concerns(c){if(c.all||(!job&&!run))return true;
  return (job&&c.jobs&&c.jobs.indexOf(job)>=0)||(run&&c.runs&&c.runs.indexOf(run)>=0);}
function refresh(){if(busy){again=true;return;}var wait=last+250-Date.now();
  if(wait>0){busy=true;setTimeout(function(){busy=false;refresh();},wait);return;}
  busy=true;last=Date.now();
  fetch(location.href,{headers:{'X-Tickwork-Live':'1'},credentials:'same-origin'}).then(function(r){return r.ok?r.text():null;}).then(function(text){
    if(text===null)return;var doc=new DOMParser().parseFromString(text,'text/html');
    doc.querySelectorAll('[data-live]').forEach(function(fresh){var old=document.getElementById(fresh.id);
      if(old)old.replaceWith(document.importNode(fresh,true));});
    refreshes+=1;body.setAttribute('data-refreshes',String(refreshes));relative();
  }).catch(function(){}).then(function(){busy=false;if(again){again=false;refresh();}});}
function relative(){var now=Date.now();document.querySelectorAll('time[data-rel]').forEach(function(t){
  var ms=Date.parse(t.getAttribute('datetime'))-now,a=Math.abs(ms),s=Math.round(a/1000),txt;
  txt=s<60?s+' s':s<3600?Math.round(s/60)+' min':s<172800?Math.round(s/3600)+' h':Math.round(s/86400)+' d';
  t.textContent=ms>=0?'in '+txt:txt+' ago';});}
relative();setInterval(relative,1000);
setInterval(function(){if(root.getAttribute('data-live')!=='sse'||Date.now()-lastChange>=poll){lastChange=Date.now();refresh();}},poll);
if(window.EventSource&&d.events){var es=new EventSource(d.events);
  es.addEventListener('ready',function(){root.setAttribute('data-live','sse');});
  es.addEventListener('change',function(e){lastChange=Date.now();try{if(concerns(JSON.parse(e.data)))refresh();}catch(x){}});
  es.onerror=function(){root.setAttribute('data-live','poll');};}
else root.setAttribute('data-live','poll');
})();
`;

export interface Asset {
  readonly path: string;
  readonly type: string;
  readonly body: Buffer;
}

function asset(name: string, extension: string, type: string, text: string): Asset {
  const body = Buffer.from(text);
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 10);
  return { path: `/assets/${name}.${hash}.${extension}`, type, body };
}

export const ASSETS: readonly Asset[] = [asset('app', 'css', 'text/css; charset=utf-8', STYLE), asset('app', 'js', 'text/javascript; charset=utf-8', SCRIPT)];
