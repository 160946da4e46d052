// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.plot;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.nio.file.Path;
import java.util.List;
import java.util.function.DoubleUnaryOperator;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.annotations.XYPointerAnnotation;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYStepRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * A latency percentile curve as HdrHistogram's percentile distribution is drawn: x is
 * {@code 1/(1-q)} on a logarithmic axis labelled 0%, 90%, 99%, 99.9%..., so the body and each decade of
 * the tail get the same width however long the tail is; y is the latency in µs (logarithmic when the
 * samples span a factor of 20 or more). The curve is exact, not binned: it is drawn from a percentile
 * function the caller gives (the same one its other outputs use), as steps, so at every percentile
 * level the curve shows that function's value. Labelled points mark the statistics the caller names.
 * Stateless.
 */
public final class PercentileChart {
    static {
        System.setProperty("java.awt.headless", "true"); // before the first AWT class: no display needed
    }

    /** Points per decade of x: plenty for a smooth curve at 1000 pixels. */
    private static final int POINTS_PER_DECADE = 200;

    private PercentileChart() {}

    /**
     * A statistic to mark on the curve: at percentile level {@code q} (0..1) it is {@code us}; {@code label}
     * is the text shown (the caller formats the number as its other outputs do).
     */
    public record Mark(String label, double q, double us) {
    }

    /**
     * Writes the chart.
     *
     * @param samples how many samples {@code percentile} ranks (the curve's right end is at 1/samples)
     * @param percentile q (0..1) -> the latency in µs at that level; {@code percentile(1)} is the max
     */
    public static void write(Path png, String title, String subtitle, long samples, DoubleUnaryOperator percentile,
            List<Mark> marks) {
        if (samples < 1) {
            throw new IllegalArgumentException("no samples to plot");
        }
        double xMax = Math.max(10, samples);
        XYSeries curve = new XYSeries("latency at percentile", true, false);
        int points = (int) Math.ceil(Math.log10(xMax) * POINTS_PER_DECADE);
        double minY = Double.POSITIVE_INFINITY;
        double maxY = 0;
        for (int k = 0; k <= points; k++) {
            double x = Math.pow(10, Math.log10(xMax) * k / points);
            // the right end is the max (q = 1), which 1/(1-q) would put at infinity
            double y = percentile.applyAsDouble(k == points ? 1 : Math.min(1, 1 - 1 / x));
            if (!Double.isFinite(y)) {
                throw new IllegalArgumentException("a sample is not a finite number: " + y);
            }
            curve.addOrUpdate(x, y);
            minY = Math.min(minY, y);
            maxY = Math.max(maxY, y);
        }
        XYStepRenderer steps = new XYStepRenderer();
        steps.setSeriesPaint(0, new Color(0x1f77b4));
        steps.setSeriesStroke(0, new BasicStroke(2.2f));
        LogAxis x = new LogAxis("percentile (log scale of 1/(1-percentile): each decade is one more nine)");
        x.setBase(10);
        x.setNumberFormatOverride(new PercentileAxisFormat());
        x.setTickUnit(new NumberTickUnit(1), false, true);
        x.setMinorTickMarksVisible(true);
        x.setRange(1, xMax * 1.6); // room for the max's label at the right end
        ValueAxis y;
        if (minY > 0 && maxY / minY >= 20) {
            LogAxis log = new LogAxis("latency (µs, log scale)");
            log.setBase(10);
            log.setNumberFormatOverride(new CompactFormat());
            log.setTickUnit(new NumberTickUnit(1), false, true);
            log.setMinorTickMarksVisible(true);
            log.setRange(minY / 1.5, maxY * 2.5);
            y = log;
        } else {
            NumberAxis linear = new NumberAxis("latency (µs)");
            linear.setAutoRangeIncludesZero(true);
            linear.setUpperMargin(0.15);
            y = linear;
        }
        XYPlot plot = new XYPlot(new XYSeriesCollection(curve), x, y, steps);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        Font font = new Font(Font.SANS_SERIF, Font.PLAIN, 12);
        for (Mark m : marks) {
            double mx = m.q() >= 1 ? xMax : 1 / (1 - m.q());
            // the label goes where the chart has room: up and right near the left edge, down and left
            // at the right end (the max), up and left elsewhere
            boolean atEnd = m.q() >= 1;
            boolean nearStart = mx < 10;
            double angle = atEnd ? Math.PI * 0.6 : nearStart ? -Math.PI / 4 : -Math.PI / 2.6;
            XYPointerAnnotation a = new XYPointerAnnotation(m.label(), mx, m.us(), angle);
            a.setFont(font);
            a.setTipRadius(3);
            a.setBaseRadius(atEnd ? 70 : 40);
            a.setArrowPaint(Color.DARK_GRAY);
            a.setTextAnchor(atEnd ? TextAnchor.TOP_RIGHT
                    : nearStart ? TextAnchor.BOTTOM_LEFT : TextAnchor.BOTTOM_RIGHT);
            plot.addAnnotation(a);
        }
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, false);
        for (String line : subtitle.split("\n")) {
            chart.addSubtitle(new TextTitle(line, font));
        }
        chart.setBackgroundPaint(Color.WHITE);
        Charts.savePng(png, chart, Charts.WIDTH, Charts.HEIGHT);
    }

}
