// Reads flamegraph SVGs back with a real XML parser (libxml2), so tests check what a browser
// would see: well-formedness, frame geometry, colours and tooltips.
#pragma once

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace lockprof::test {

struct SvgFrame {
    std::string title, name, fill, cls;
    double x = 0, y = 0, width = 0, height = 0;
};

struct ParsedSvg {
    bool well_formed = false;
    std::string error;
    std::vector<SvgFrame> frames;
    std::vector<std::string> vanished;  // texts of the diff's vanished list
    std::string all_text;               // every text node, concatenated

    const SvgFrame* frame(const std::string& name) const {
        for (const auto& f : frames)
            if (f.name == name) return &f;
        return nullptr;
    }
};

namespace detail {
inline std::string attr(xmlNode* n, const char* name) {
    xmlChar* v = xmlGetProp(n, reinterpret_cast<const xmlChar*>(name));
    if (!v) return {};
    std::string s(reinterpret_cast<const char*>(v));
    xmlFree(v);
    return s;
}
inline std::string text_of(xmlNode* n) {
    xmlChar* v = xmlNodeGetContent(n);
    std::string s = v ? reinterpret_cast<const char*>(v) : "";
    xmlFree(v);
    return s;
}
inline bool is(xmlNode* n, const char* name) {
    return n->type == XML_ELEMENT_NODE &&
           xmlStrcmp(n->name, reinterpret_cast<const xmlChar*>(name)) == 0;
}
inline void collect(xmlNode* n, ParsedSvg& out, bool in_frames) {
    for (; n; n = n->next) {
        if (is(n, "text") || is(n, "title")) out.all_text += text_of(n) + "\n";
        if (is(n, "g") && detail::attr(n, "id") == "frames") {
            collect(n->children, out, true);
            continue;
        }
        if (is(n, "g") && detail::attr(n, "class") == "vanished") {
            for (xmlNode* c = n->children; c; c = c->next)
                if (is(c, "text")) out.vanished.push_back(text_of(c));
        }
        if (in_frames && is(n, "g")) {
            SvgFrame f;
            for (xmlNode* c = n->children; c; c = c->next) {
                if (is(c, "title")) f.title = text_of(c);
                if (is(c, "rect")) {
                    f.x = std::stod(attr(c, "x"));
                    f.y = std::stod(attr(c, "y"));
                    f.width = std::stod(attr(c, "width"));
                    f.height = std::stod(attr(c, "height"));
                    f.fill = attr(c, "fill");
                    f.cls = attr(c, "class");
                }
            }
            f.name = f.title.substr(0, f.title.rfind(" ("));
            out.frames.push_back(f);
            continue;
        }
        collect(n->children, out, in_frames);
    }
}
}  // namespace detail

inline ParsedSvg parse_svg(const std::string& svg) {
    ParsedSvg out;
    xmlDoc* doc = xmlReadMemory(svg.data(), static_cast<int>(svg.size()), "flamegraph.svg", nullptr,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) {
        const xmlError* e = xmlGetLastError();
        out.error = e && e->message ? e->message : "unknown XML error";
        return out;
    }
    out.well_formed = true;
    xmlNode* root = xmlDocGetRootElement(doc);
    if (!root || !detail::is(root, "svg")) {
        out.well_formed = false;
        out.error = "root element is not <svg>";
    } else {
        detail::collect(root->children, out, false);
    }
    xmlFreeDoc(doc);
    return out;
}

struct Rgb {
    int r = -1, g = -1, b = -1;
};
inline Rgb parse_rgb(const std::string& fill) {
    Rgb c;
    std::sscanf(fill.c_str(), "rgb(%d,%d,%d)", &c.r, &c.g, &c.b);
    return c;
}

}  // namespace lockprof::test
