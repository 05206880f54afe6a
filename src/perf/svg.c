/* The roofline chart: a hand-written SVG (no dependency), sized 960 x 640. The axes are
 * logarithmic, x in powers of two of FLOP/byte, y in decades of GFLOP/s, each range widened to
 * hold every ceiling's meeting point and every mark. Peak labels sit in the right margin
 * (never over a kernel's point), bandwidth labels along their slopes near the left. */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "perf/svg.h"

#define W 960
#define H 640
#define LEFT 90
#define RIGHT 150
#define TOP 60
#define BOTTOM 70
#define PW (W - LEFT - RIGHT)
#define PH (H - TOP - BOTTOM)

static const char *const peak_color[RIDGE_PEAK_COUNT] = {"#7f7f7f", "#1f77b4", "#d62728",
                                                         "#9467bd", "#8c564b"};
static const char *const level_color[RIDGE_LEVEL_COUNT] = {"#2ca02c", "#17becf", "#ff7f0e",
                                                           "#444444"};

typedef struct axes {
    double lx0, lx1; /* log2 of the x range */
    double ly0, ly1; /* log10 of the y range */
} axes;

static double px(const axes *a, double x) { return LEFT + (log2(x) - a->lx0) / (a->lx1 - a->lx0) * PW; }
static double py(const axes *a, double y) { return TOP + PH - (log10(y) - a->ly0) / (a->ly1 - a->ly0) * PH; }

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '&') fputs("&amp;", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '"') fputs("&quot;", f);
        else if ((unsigned char)*s >= 0x20) fputc(*s, f);
    }
}

/* "1/16", "1/2", "1", "8", "1024" */
static void pow2_label(char *buf, size_t n, int e)
{
    if (e < 0) snprintf(buf, n, "1/%.0f", ldexp(1, -e));
    else snprintf(buf, n, "%.0f", ldexp(1, e));
}

static int mark_ok(const ridge_roofline_mark *m)
{
    return isfinite(m->intensity) && isfinite(m->gflops) && m->intensity > 0 && m->gflops > 0;
}

ridge_status ridge_roofline_svg(const ridge_roofline *roof, int threads,
                                const ridge_roofline_mark *marks, size_t nmarks, FILE *f)
{
    ridge_roofline_point p;
    ridge_status st = ridge_roofline_at(roof, threads, &p);
    if (st) return st;
    double top = 0, low = INFINITY, bw_lo = INFINITY, bw_hi = 0;
    for (int k = 0; k < RIDGE_PEAK_COUNT; k++)
        if (p.peak[k] > 0) top = fmax(top, p.peak[k]), low = fmin(low, p.peak[k]);
    double bw[RIDGE_LEVEL_COUNT];
    for (int l = 0; l < RIDGE_LEVEL_COUNT; l++) {
        bw[l] = ridge_roofline_bandwidth(&p, l);
        bw_lo = fmin(bw_lo, bw[l]);
        bw_hi = fmax(bw_hi, bw[l]);
    }
    if (!(top > 0) || !(bw_lo > 0)) return ridge_error(RIDGE_EINVAL, "roofline_svg: empty profile");

    /* ranges: x covers every ridge point and mark with room on both sides; y covers the
     * ceilings, the slopes at the left edge (within 6 decades of the top) and the marks */
    double xlo = fmin(1.0 / 4, low / bw_hi / 2), xhi = fmax(64.0, top / bw_lo * 16);
    double ylo = fmin(low / 2, bw_lo * xlo), yhi = top * 1.5;
    for (size_t i = 0; i < nmarks; i++) {
        if (!mark_ok(&marks[i])) continue;
        xlo = fmin(xlo, marks[i].intensity / 2), xhi = fmax(xhi, marks[i].intensity * 2);
        ylo = fmin(ylo, marks[i].gflops / 1.5), yhi = fmax(yhi, marks[i].gflops * 1.5);
    }
    axes a;
    a.lx0 = floor(log2(fmax(xlo, 0x1p-20)));
    a.lx1 = ceil(log2(fmin(xhi, 0x1p20)));
    a.ly1 = ceil(log10(yhi));
    a.ly0 = fmax(floor(log10(ylo)), a.ly1 - 6);

    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n",
            W, H, W, H);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<defs><clipPath id=\"plot\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>"
               "</clipPath></defs>\n", LEFT, TOP, PW, PH);
    fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"18\" font-weight=\"bold\">Roofline: ", LEFT);
    xml_text(f, roof->cpu);
    fprintf(f, ", %d thread%s</text>\n", threads, threads == 1 ? "" : "s");
    fprintf(f, "<text x=\"%d\" y=\"47\" font-size=\"12\" fill=\"#555\">measured by ridge "
               "roofline%s, %s; each ceiling is the best of several trials</text>\n",
            LEFT, roof->quick ? " --quick" : "", roof->measured_at);

    /* grid and tick labels */
    fprintf(f, "<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n");
    for (int e = (int)a.lx0; e <= (int)a.lx1; e++)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", px(&a, ldexp(1, e)),
                TOP, px(&a, ldexp(1, e)), TOP + PH);
    for (int e = (int)a.ly0; e <= (int)a.ly1; e++)
        for (int m = 1; m < 10 && e + log10(m) <= a.ly1; m++) {
            double y = py(&a, m * pow(10, e));
            fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"%s/>\n", LEFT, y,
                    LEFT + PW, y, m == 1 ? " stroke=\"#c8c8c8\"" : "");
        }
    fprintf(f, "</g>\n<g font-size=\"13\" fill=\"#222\">\n");
    int xstep = (int)(a.lx1 - a.lx0) > 16 ? 2 : 1;
    for (int e = (int)a.lx0; e <= (int)a.lx1; e += xstep) {
        char lab[32];
        pow2_label(lab, sizeof lab, e);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                px(&a, ldexp(1, e)), TOP + PH + 20, lab);
    }
    for (int e = (int)a.ly0; e <= (int)a.ly1; e++)
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", LEFT - 8,
                py(&a, pow(10, e)) + 4, pow(10, e));
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"14\">arithmetic "
               "intensity (FLOP/byte)</text>\n", LEFT + PW / 2, H - 22);
    fprintf(f, "<text transform=\"translate(24 %d) rotate(-90)\" text-anchor=\"middle\" "
               "font-size=\"14\">GFLOP/s (int8: GOP/s)</text>\n</g>\n", TOP + PH / 2);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
               "stroke=\"#222\"/>\n", LEFT, TOP, PW, PH);

    double xmin = ldexp(1, (int)a.lx0), xmax = ldexp(1, (int)a.lx1);
    double ymin = pow(10, a.ly0);
    fprintf(f, "<g clip-path=\"url(#plot)\" fill=\"none\" stroke-width=\"2.5\">\n");
    /* bandwidth slopes, each up to the highest peak, with its label along it */
    for (int l = 0; l < RIDGE_LEVEL_COUNT; l++) {
        double x0 = fmax(xmin, ymin / bw[l]), x1 = fmin(xmax, top / bw[l]);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
                px(&a, x0), py(&a, bw[l] * x0), px(&a, x1), py(&a, bw[l] * x1), level_color[l]);
    }
    /* compute ceilings across the plot */
    for (int k = 0; k < RIDGE_PEAK_COUNT; k++)
        if (p.peak[k] > 0)
            fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n", LEFT,
                    py(&a, p.peak[k]), LEFT + PW, py(&a, p.peak[k]), peak_color[k]);
    /* text over lines gets a white halo (stroke painted under the fill) to stay legible */
    fprintf(f, "</g>\n<g font-size=\"13\" font-weight=\"bold\" stroke=\"white\" "
               "stroke-width=\"3\" paint-order=\"stroke\">\n");
    for (int l = 0; l < RIDGE_LEVEL_COUNT; l++) {
        /* the label starts a little past where the slope enters the plot */
        double x0 = fmax(xmin, ymin / bw[l]) * 1.6;
        double x1 = x0 * 4;
        double ang = atan2(py(&a, bw[l] * x1) - py(&a, bw[l] * x0), px(&a, x1) - px(&a, x0));
        fprintf(f, "<text transform=\"translate(%.1f %.1f) rotate(%.1f)\" fill=\"%s\" "
                   "dy=\"-6\">%s %.0f GB/s</text>\n",
                px(&a, x0), py(&a, bw[l] * x0), ang * 180 / M_PI, level_color[l],
                ridge_roofline_level_name(l), bw[l]);
    }
    /* peak labels in the right margin, level with their lines, pushed down when two peaks
     * are closer than the text height; so they never hide a kernel's point */
    double last_y = -1e9;
    int order[RIDGE_PEAK_COUNT], n = 0;
    for (int k = 0; k < RIDGE_PEAK_COUNT; k++)
        if (p.peak[k] > 0) order[n++] = k;
    for (int i = 0; i < n; i++) /* highest first */
        for (int j = i + 1; j < n; j++)
            if (p.peak[order[j]] > p.peak[order[i]]) {
                int t = order[i];
                order[i] = order[j], order[j] = t;
            }
    for (int i = 0; i < n; i++) {
        int k = order[i];
        double ty = fmax(py(&a, p.peak[k]) + 4, last_y + 15);
        last_y = ty;
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" fill=\"%s\">%s %.*f</text>\n", LEFT + PW + 6, ty,
                peak_color[k], ridge_roofline_peak_name(k), p.peak[k] >= 100 ? 0 : 1, p.peak[k]);
    }
    fprintf(f, "</g>\n");
    /* ridge points of the best fp32 peak: where each slope meets it */
    double f32 = 0;
    for (int k = RIDGE_PEAK_F32_REF; k <= RIDGE_PEAK_F32_AVX512; k++) f32 = fmax(f32, p.peak[k]);
    fprintf(f, "<g font-size=\"11\" fill=\"#222\" text-anchor=\"middle\">\n");
    for (int l = 0; l < RIDGE_LEVEL_COUNT; l++) {
        double r = f32 / bw[l];
        if (r < xmin || r > xmax) continue;
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"white\" stroke=\"%s\" "
                   "stroke-width=\"2\"/>\n", px(&a, r), py(&a, f32), level_color[l]);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%.2g</text>\n", px(&a, r), py(&a, f32) + 18, r);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#555\">circles: ridge "
               "points (FLOP/byte), where each level meets the top fp32 ceiling</text>\n</g>\n",
            LEFT + PW - 8, TOP + PH - 10);

    /* the kernels; labels right of the point, or left of it near the right edge */
    fprintf(f, "<g font-size=\"11\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">\n");
    for (size_t i = 0; i < nmarks; i++) {
        const ridge_roofline_mark *m = &marks[i];
        if (!mark_ok(m)) continue;
        double x = px(&a, m->intensity), y = py(&a, m->gflops);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"#000\" "
                   "fill-opacity=\"0.75\"/>\n", x, y);
        int left = x > LEFT + 0.8 * PW;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#000\" text-anchor=\"%s\">",
                left ? x - 7 : x + 7, y - 5, left ? "end" : "start");
        xml_text(f, m->label ? m->label : "");
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</g>\n</svg>\n");
    fflush(f);
    return ferror(f) ? ridge_error(RIDGE_EIO, "roofline_svg: write failed") : RIDGE_OK;
}
