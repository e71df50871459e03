// The script and style embedded in every SVG flamegraph (kept apart from the layout code so
// both stay readable). Private to src/export/.
#pragma once

namespace lockprof::exporting::detail {

// Plain ES5-level JavaScript so any SVG viewer with scripting runs it. Frames are
// <g><title>NAME (details)</title><rect/><text/></g> inside <g id="frames">; the script reads
// geometry from the rects once at load and keeps originals for reset.
inline constexpr const char* kFlamegraphScript = R"JS(
"use strict";
// Errors are recorded on the root element so headless tests (and curious users) can see them.
window.addEventListener("error", function (e) {
    document.documentElement.setAttribute("data-lockprof-error", String(e.message));
});
var svg, details, searchbtn, unzoombtn, matchedtxt, frames, groups = [];
var config, searching = false, zoomed = null;

function frame_name(g) {
    var t = g.getElementsByTagName("title")[0].textContent;
    var cut = t.lastIndexOf(" (");
    return cut >= 0 ? t.substring(0, cut) : t;
}

function init(evt) {
    svg = document.documentElement;
    config = {
        width: parseFloat(svg.getAttribute("data-width")),
        xpad: parseFloat(svg.getAttribute("data-xpad")),
        fontsize: parseFloat(svg.getAttribute("data-fontsize")),
        fontwidth: 0.59,
        inverted: svg.getAttribute("data-inverted") === "1"
    };
    details = document.getElementById("details").firstChild;
    searchbtn = document.getElementById("search");
    unzoombtn = document.getElementById("unzoom");
    matchedtxt = document.getElementById("matched");
    frames = document.getElementById("frames");
    var gs = frames.getElementsByTagName("g");
    for (var i = 0; i < gs.length; i++) {
        var g = gs[i], r = g.getElementsByTagName("rect")[0];
        g.lp = {
            name: frame_name(g),
            x: parseFloat(r.getAttribute("x")),
            w: parseFloat(r.getAttribute("width")),
            // Larger level = further from the root, whichever way the graph grows.
            level: config.inverted ? parseFloat(r.getAttribute("y")) : -parseFloat(r.getAttribute("y")),
            fill: r.getAttribute("fill"),
            rect: r,
            text: g.getElementsByTagName("text")[0]
        };
        groups.push(g);
    }
    frames.addEventListener("click", function (e) {
        var g = owning_frame(e.target);
        if (g) zoom(g);
    });
    frames.addEventListener("mouseover", function (e) {
        var g = owning_frame(e.target);
        if (g) details.nodeValue = g.getElementsByTagName("title")[0].textContent;
    });
    frames.addEventListener("mouseout", function () { details.nodeValue = " "; });
    unzoombtn.addEventListener("click", unzoom);
    searchbtn.addEventListener("click", search_prompt);
    window.addEventListener("keydown", function (e) {
        if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {
            e.preventDefault();
            search_prompt();
        } else if (e.keyCode === 27) {
            unzoom();
        }
    });
    // ?s=TERM searches on load, so a link can point at a highlighted view.
    var match = /[?&]s=([^&]*)/.exec(document.location.search || "");
    if (match) search(decodeURIComponent(match[1].replace(/\+/g, " ")));
    svg.setAttribute("data-lockprof-ready", "1");
}

function owning_frame(node) {
    while (node && node !== frames) {
        if (node.lp) return node;
        node = node.parentNode;
    }
    return null;
}

function fit_text(g) {
    var lp = g.lp;
    var x = parseFloat(lp.rect.getAttribute("x")), w = parseFloat(lp.rect.getAttribute("width"));
    lp.text.setAttribute("x", (x + 3).toFixed(2));
    var chars = Math.floor((w - 6) / (config.fontsize * config.fontwidth));
    if (chars < 3) {
        lp.text.textContent = "";
    } else if (lp.name.length <= chars) {
        lp.text.textContent = lp.name;
    } else {
        lp.text.textContent = lp.name.substring(0, chars - 2) + "..";
    }
}

function zoom(node) {
    var eps = 0.0001, z = node.lp, full = config.width - 2 * config.xpad;
    var ratio = full / z.w;
    zoomed = node;
    unzoombtn.classList.remove("hide");
    for (var i = 0; i < groups.length; i++) {
        var g = groups[i], lp = g.lp;
        g.classList.remove("parent");
        g.classList.remove("hide");
        if (lp.level < z.level) {
            // Shallower: keep the ancestors (they contain the zoomed frame) at full width.
            if (lp.x <= z.x + eps && lp.x + lp.w >= z.x + z.w - eps) {
                lp.rect.setAttribute("x", config.xpad);
                lp.rect.setAttribute("width", full);
                g.classList.add("parent");
            } else {
                g.classList.add("hide");
            }
        } else if (lp.x >= z.x - eps && lp.x + lp.w <= z.x + z.w + eps && lp.w > 0) {
            lp.rect.setAttribute("x", (config.xpad + (lp.x - z.x) * ratio).toFixed(2));
            lp.rect.setAttribute("width", (lp.w * ratio).toFixed(2));
        } else {
            g.classList.add("hide");
        }
        fit_text(g);
    }
}

function unzoom() {
    zoomed = null;
    unzoombtn.classList.add("hide");
    for (var i = 0; i < groups.length; i++) {
        var g = groups[i], lp = g.lp;
        g.classList.remove("parent");
        g.classList.remove("hide");
        lp.rect.setAttribute("x", lp.x.toFixed(2));
        lp.rect.setAttribute("width", lp.w.toFixed(2));
        fit_text(g);
    }
}

function search_prompt() {
    if (searching) {
        reset_search();
        return;
    }
    var term = window.prompt("Search frames (regular expression, or plain text if it is not one)", "");
    if (term !== null && term !== "") search(term);
}

function reset_search() {
    searching = false;
    for (var i = 0; i < groups.length; i++) groups[i].lp.rect.setAttribute("fill", groups[i].lp.fill);
    matchedtxt.textContent = " ";
    searchbtn.textContent = "Search";
    searchbtn.classList.remove("show");
}

// Highlights matching frames and reports the share of all samples under a match, counting
// nested matches once (a matched frame inside a matched frame adds nothing).
function search(term) {
    var re = null;
    try { re = new RegExp(term); } catch (e) { re = null; }
    var spans = [], total = 0;
    for (var i = 0; i < groups.length; i++) {
        var lp = groups[i].lp;
        total = Math.max(total, lp.w);
        var hit = re ? re.test(lp.name) : lp.name.indexOf(term) >= 0;
        lp.rect.setAttribute("fill", hit ? "rgb(230,0,230)" : lp.fill);
        if (hit) spans.push([lp.x, lp.w]);
    }
    spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
    var covered = 0, end = -1;
    for (var j = 0; j < spans.length; j++) {
        if (spans[j][0] >= end - 0.0001) {
            covered += spans[j][1];
            end = spans[j][0] + spans[j][1];
        }
    }
    searching = true;
    searchbtn.textContent = "Reset Search";
    searchbtn.classList.add("show");
    var pct = total > 0 ? (100 * covered / total) : 0;
    matchedtxt.textContent = "Matched: " + pct.toFixed(1) + "%";
    svg.setAttribute("data-lockprof-matched", pct.toFixed(1));
}
)JS";

inline constexpr const char* kFlamegraphStyle = R"CSS(
text { font-family: monospace; fill: rgb(0,0,0); }
#title { text-anchor: middle; font-weight: bold; }
#subtitle { text-anchor: middle; fill: rgb(80,80,80); }
#search, #unzoom { cursor: pointer; }
#search { opacity: 0.4; }
#search:hover, #search.show { opacity: 1; }
#unzoom:hover { text-decoration: underline; }
#frames > g:hover > rect { stroke: rgb(0,0,0); stroke-width: 0.5; cursor: pointer; }
.hide { display: none; }
.parent { opacity: 0.5; }
)CSS";

}  // namespace lockprof::exporting::detail
