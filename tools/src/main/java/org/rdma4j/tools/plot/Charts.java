// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.plot;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.SequencedMap;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.renderer.xy.StandardXYBarPainter;
import org.jfree.chart.renderer.xy.XYBarRenderer;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.renderer.xy.XYStepRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.statistics.HistogramDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * PNG charts for the tools' {@code --plot} options, drawn with JFreeChart off screen (headless: no
 * display is needed or used). Every method writes the whole file or throws; none keeps state, so all
 * are safe from any thread.
 */
public final class Charts {

    static {
        // Before the first AWT class loads: the tools run on servers and in the VM, without a display.
        System.setProperty("java.awt.headless", "true");
    }

    /** Width and height of every chart, in pixels. */
    static final int WIDTH = 1000;
    static final int HEIGHT = 700;

    private static final Color[] PALETTE = {
        new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0xd62728),
        new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f),
        new Color(0xbcbd22), new Color(0x17becf),
    };

    private Charts() {}

    /**
     * A latency distribution: a histogram (top) and the cumulative distribution (bottom) over one
     * shared latency axis, with the median and p99 in the title line below {@code title}.
     *
     * @param samplesUs the samples in microseconds; at least one, all finite
     */
    public static void latency(Path png, String title, double[] samplesUs) {
        if (samplesUs.length == 0) {
            throw new IllegalArgumentException("no samples to plot");
        }
        double[] sorted = samplesUs.clone();
        Arrays.sort(sorted);
        for (double s : sorted) {
            if (!Double.isFinite(s)) {
                throw new IllegalArgumentException("a sample is not a finite number: " + s);
            }
        }
        // The histogram spans min..p99.9 so one stall does not squash every other bar into one bin;
        // the CDF shows everything.
        double lo = sorted[0];
        double hi = percentile(sorted, 0.999);
        if (hi <= lo) {
            hi = lo + Math.max(Math.abs(lo) * 0.01, 1e-3);
        }
        final double top = hi;
        double[] inRange = Arrays.stream(sorted).filter(s -> s <= top).toArray();
        HistogramDataset hist = new HistogramDataset();
        hist.addSeries("samples", inRange, Math.max(10, Math.min(100, (int) Math.sqrt(inRange.length))), lo, hi);
        NumberAxis countAxis = new NumberAxis("samples per bin");
        XYBarRenderer bars = new XYBarRenderer(0.05);
        bars.setBarPainter(new StandardXYBarPainter());
        bars.setShadowVisible(false);
        bars.setSeriesPaint(0, PALETTE[0]);
        XYPlot histPlot = new XYPlot(hist, null, countAxis, bars);

        XYSeries cdf = new XYSeries("CDF", true, true);
        int n = sorted.length;
        int step = Math.max(1, n / 2000); // enough points for a smooth curve at this width
        for (int i = 0; i < n; i += step) {
            cdf.add(sorted[i], (i + 1) / (double) n);
        }
        cdf.add(sorted[n - 1], 1.0);
        XYStepRenderer steps = new XYStepRenderer();
        steps.setSeriesPaint(0, PALETTE[1]);
        steps.setSeriesStroke(0, new BasicStroke(2f));
        NumberAxis fractionAxis = new NumberAxis("fraction of samples ≤ x");
        fractionAxis.setRange(0, 1.02);
        XYPlot cdfPlot = new XYPlot(new XYSeriesCollection(cdf), null, fractionAxis, steps);

        NumberAxis latencyAxis = new NumberAxis(hi < sorted[n - 1]
                ? "latency (µs; axis ends at p99.9, the CDF reaches 1 at the max)" : "latency (µs)");
        double margin = (hi - lo) * 0.03;
        latencyAxis.setRange(Math.max(0, lo - margin), hi + margin);
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(latencyAxis);
        plot.setGap(12);
        plot.add(histPlot, 3);
        plot.add(cdfPlot, 2);
        String subtitle = String.format(Locale.ROOT,
               "%d samples, median %.3f µs, p99 %.3f µs, max %.3f µs",
                n, percentile(sorted, 0.5), percentile(sorted, 0.99), sorted[n - 1]);
        JFreeChart chart = new JFreeChart(title + "\n" + subtitle, JFreeChart.DEFAULT_TITLE_FONT, plot, false);
        write(png, chart);
    }

    /**
     * Lines through points, one per series, with linear or logarithmic axes. On a logarithmic axis
     * points with a value {@code <= 0} cannot be drawn and are left out.
     *
     * @param series name -> {xs, ys} of equal length, drawn in the map's order
     */
    public static void lines(Path png, String title, String xLabel, String yLabel, boolean logX, boolean logY,
            SequencedMap<String, double[][]> series) {
        if (series.isEmpty()) {
            throw new IllegalArgumentException("no series to plot");
        }
        XYSeriesCollection data = new XYSeriesCollection();
        for (Map.Entry<String, double[][]> e : series.entrySet()) {
            double[][] xy = e.getValue();
            if (xy.length != 2 || xy[0].length != xy[1].length) {
                throw new IllegalArgumentException("series " + e.getKey() + " needs {xs, ys} of equal length");
            }
            XYSeries s = new XYSeries(e.getKey(), false, true);
            for (int i = 0; i < xy[0].length; i++) {
                double x = xy[0][i];
                double y = xy[1][i];
                if (!Double.isFinite(x) || !Double.isFinite(y) || (logX && x <= 0) || (logY && y <= 0)) {
                    continue;
                }
                s.add(x, y);
            }
            data.addSeries(s);
        }
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
            renderer.setSeriesStroke(i, new BasicStroke(2f));
        }
        XYPlot plot = new XYPlot(data, axis(xLabel, logX, data.getDomainLowerBound(false),
                data.getDomainUpperBound(false)), axis(yLabel, logY, data.getRangeLowerBound(false),
                data.getRangeUpperBound(false)), renderer);
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        write(png, chart);
    }

    /**
     * Grouped bars: one group per category, one bar per series in each group, the value printed above
     * each bar. When all values are positive and span a factor of 50 or more, the value axis is
     * logarithmic (and says so), so the small bars stay visible.
     *
     * @param series name -> one value per category, drawn in the map's order
     */
    public static void bars(Path png, String title, String yLabel, String[] categories,
            SequencedMap<String, double[]> series) {
        bars(png, title, yLabel, categories, series, "0.##");
    }

    /**
     * {@link #bars(Path, String, String, String[], SequencedMap)} with the values above the bars in
     * {@code labelPattern} ({@link java.text.DecimalFormat}'s, e.g. "0.######" for six decimals).
     */
    public static void bars(Path png, String title, String yLabel, String[] categories,
            SequencedMap<String, double[]> series, String labelPattern) {
        if (series.isEmpty() || categories.length == 0) {
            throw new IllegalArgumentException("no bars to plot");
        }
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (Map.Entry<String, double[]> e : series.entrySet()) {
            if (e.getValue().length != categories.length) {
                throw new IllegalArgumentException("series " + e.getKey() + " has " + e.getValue().length
                        + " values for " + categories.length + " categories");
            }
            for (int i = 0; i < categories.length; i++) {
                double v = e.getValue()[i];
                data.addValue(Double.isFinite(v) ? (Number) v : null, e.getKey(), categories[i]);
            }
        }
        BarRenderer renderer = new BarRenderer();
        renderer.setBarPainter(new StandardBarPainter());
        renderer.setShadowVisible(false);
        renderer.setItemMargin(0.05);
        renderer.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}",
                new java.text.DecimalFormat(labelPattern)));
        renderer.setDefaultItemLabelsVisible(true);
        renderer.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        for (int i = 0; i < series.size(); i++) {
            renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
        }
        CategoryAxis categoryAxis = new CategoryAxis();
        categoryAxis.setMaximumCategoryLabelLines(3);
        categoryAxis.setCategoryLabelPositions(CategoryLabelPositions.STANDARD);
        double min = Double.POSITIVE_INFINITY;
        double max = 0;
        for (double[] values : series.values()) {
            for (double v : values) {
                if (Double.isFinite(v)) {
                    min = Math.min(min, v);
                    max = Math.max(max, v);
                }
            }
        }
        ValueAxis valueAxis;
        if (min > 0 && max / min >= 50) {
            // bars that differ by orders of magnitude: on a linear axis the small ones would vanish
            LogAxis log = new LogAxis(yLabel + " (log scale)");
            log.setBase(10);
            log.setNumberFormatOverride(new CompactFormat());
            log.setTickUnit(new NumberTickUnit(1), false, true);
            log.setMinorTickMarksVisible(true);
            double lower = Math.pow(10, Math.floor(Math.log10(min)));
            log.setRange(lower, Math.pow(10, Math.ceil(Math.log10(max * 1.5))));
            renderer.setBase(lower); // bars grow from the axis' bottom, not from 0 (which a log axis lacks)
            valueAxis = log;
        } else {
            NumberAxis linear = new NumberAxis(yLabel);
            linear.setUpperMargin(0.12); // room for the labels above the tallest bar
            valueAxis = linear;
        }
        CategoryPlot plot = new CategoryPlot(data, categoryAxis, valueAxis, renderer);
        plot.setOrientation(PlotOrientation.VERTICAL);
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        write(png, chart);
    }

    /** A value axis; a logarithmic one labels each decade, or each power of 2 when the data spans under two decades. */
    private static ValueAxis axis(String label, boolean log, double min, double max) {
        if (log) {
            LogAxis a = new LogAxis(label);
            boolean narrow = !(min > 0) || !Double.isFinite(max) || max / min < 100;
            a.setBase(narrow ? 2 : 10);
            a.setSmallestValue(1e-12);
            a.setNumberFormatOverride(new CompactFormat());
            a.setTickUnit(new NumberTickUnit(1), false, true); // one labelled tick per power of the base
            a.setMinorTickMarksVisible(true);
            return a;
        }
        NumberAxis a = new NumberAxis(label);
        a.setAutoRangeIncludesZero(false);
        return a;
    }

    private static double percentile(double[] sorted, double q) {
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.clamp(i, 0, sorted.length - 1)];
    }

    private static void write(Path png, JFreeChart chart) {
        chart.setBackgroundPaint(Color.WHITE);
        if (chart.getPlot() instanceof XYPlot p) {
            style(p);
        } else if (chart.getPlot() instanceof CategoryPlot p) {
            p.setBackgroundPaint(Color.WHITE);
            p.setRangeGridlinePaint(Color.LIGHT_GRAY);
        }
        if (chart.getPlot() instanceof CombinedDomainXYPlot c) {
            for (XYPlot sub : c.getSubplots()) {
                style(sub);
            }
        }
        savePng(png, chart, WIDTH, HEIGHT);
    }

    /** Writes {@code chart} as a {@code width} x {@code height} PNG, making the file's directory; unchecked on failure. */
    public static void savePng(Path png, JFreeChart chart, int width, int height) {
        try {
            Path parent = png.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            ChartUtils.saveChartAsPNG(png.toFile(), chart, width, height);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + png + ": " + e.getMessage(), e);
        }
    }

    private static void style(XYPlot p) {
        p.setBackgroundPaint(Color.WHITE);
        p.setDomainGridlinePaint(Color.LIGHT_GRAY);
        p.setRangeGridlinePaint(Color.LIGHT_GRAY);
    }
}
