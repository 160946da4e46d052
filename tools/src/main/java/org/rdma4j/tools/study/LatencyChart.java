// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.nio.file.Path;
import java.util.Map;
import java.util.SequencedMap;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.rdma4j.tools.plot.Charts;
import org.rdma4j.tools.plot.CompactFormat;
import org.rdma4j.tools.plot.PercentileAxisFormat;

/**
 * The latency percentile plot of {@code study latency}, as HdrHistogram's percentile distribution is
 * drawn: x is {@code 1/(1-percentile)} on a logarithmic axis labelled "90%, 99%, 99.9%...", so each decade
 * of the tail gets the same width; y is the round trip in µs (logarithmic when the curves span a factor of
 * 20 or more). One curve per method, in the house style of {@code tools/plot/Charts} (white, 1000x700,
 * the same palette). Stateless.
 */
final class LatencyChart {
    static {
        System.setProperty("java.awt.headless", "true"); // before the first AWT class: no display needed
    }

    static final int WIDTH = 1000;
    static final int HEIGHT = 700;

    private static final Color[] PALETTE = {
        new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0xd62728),
        new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f),
    };

    private LatencyChart() {}

    /**
     * Writes the plot.
     *
     * @param curves legend text -> the round trips in ns, drawn in the map's order
     */
    static void write(Path png, String title, String subtitle, SequencedMap<String, Histogram> curves) {
        if (curves.isEmpty()) {
            throw new IllegalArgumentException("no curves to plot");
        }
        XYSeriesCollection data = new XYSeriesCollection();
        double maxX = 10;
        double minY = Double.POSITIVE_INFINITY;
        double maxY = 0;
        for (Map.Entry<String, Histogram> e : curves.entrySet()) {
            Histogram h = e.getValue();
            long n = h.getTotalCount();
            XYSeries s = new XYSeries(e.getKey(), false, true);
            if (n > 0) {
                for (HistogramIterationValue v : h.percentiles(5)) {
                    double p = v.getPercentileLevelIteratedTo() / 100.0;
                    // the last point (100 %) would be at infinity: it is drawn at 1/(1/n), where the
                    // slowest of n round trips stands
                    double x = p >= 1.0 ? n : Math.min(n, 1.0 / (1.0 - p));
                    double y = h.highestEquivalentValue(v.getValueIteratedTo()) / 1000.0;
                    s.add(Math.max(1.0, x), y);
                    minY = Math.min(minY, y);
                    maxY = Math.max(maxY, y);
                }
                maxX = Math.max(maxX, n);
            }
            data.addSeries(s);
        }
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, false);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
            renderer.setSeriesStroke(i, new BasicStroke(2.2f));
        }
        LogAxis x = new LogAxis("percentile (x = 1/(1-percentile), log scale: each decade is one more nine)");
        x.setBase(10);
        x.setNumberFormatOverride(new PercentileAxisFormat());
        x.setTickUnit(new NumberTickUnit(1), false, true);
        x.setMinorTickMarksVisible(true);
        x.setRange(1, maxX * 1.4); // the slowest round trip stands at n: a little room to its right
        ValueAxis y;
        if (minY > 0 && maxY / minY >= 20) {
            LogAxis log = new LogAxis("round trip (µs, log scale)");
            log.setBase(10);
            log.setNumberFormatOverride(new CompactFormat());
            log.setTickUnit(new NumberTickUnit(1), false, true);
            log.setMinorTickMarksVisible(true);
            log.setRange(minY / 1.5, maxY * 1.5);
            y = log;
        } else {
            NumberAxis linear = new NumberAxis("round trip (µs)");
            linear.setAutoRangeIncludesZero(true);
            linear.setUpperMargin(0.08);
            y = linear;
        }
        XYPlot plot = new XYPlot(data, x, y, renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        plot.setDomainGridlinesVisible(true);
        plot.setRangeGridlinesVisible(true);
        // the median (x = 2) has no tick of its own: a dashed line there, where the table's p50 is read
        ValueMarker median = new ValueMarker(2, Color.GRAY, new BasicStroke(1f, BasicStroke.CAP_BUTT,
                BasicStroke.JOIN_MITER, 10f, new float[] {4f, 4f}, 0f));
        median.setLabel("50%");
        median.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        median.setLabelAnchor(RectangleAnchor.BOTTOM_RIGHT);
        median.setLabelTextAnchor(TextAnchor.BOTTOM_LEFT);
        median.setLabelBackgroundColor(new Color(255, 255, 255, 0));
        plot.addDomainMarker(median);
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        chart.addSubtitle(new TextTitle(subtitle, new Font(Font.SANS_SERIF, Font.PLAIN, 12)));
        chart.setBackgroundPaint(Color.WHITE);
        Charts.savePng(png, chart, WIDTH, HEIGHT);
    }
}
