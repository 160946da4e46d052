package org.rdma4j.tools.plot;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.SequencedMap;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYBarRenderer;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.renderer.xy.StandardXYBarPainter;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYIntervalSeries;
import org.jfree.data.xy.XYIntervalSeriesCollection;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * PNG charts for the tools (JFreeChart, headless). A minimal copy for {@code rdma4j perf}: helper
 * "study" owns this class; the signatures are the shared ones. Stateless.
 */
public final class Charts {
    static final int WIDTH = 900;
    static final int HEIGHT = 600;

    static {
        System.setProperty("java.awt.headless", "true");
    }

    private Charts() {}

    /**
     * A histogram of the samples above their CDF, sharing a logarithmic latency axis (microseconds):
     * latency has a body and a tail orders of magnitude apart, and a linear axis shows only one of them.
     * The bins are equal in log space.
     */
    public static void latency(Path png, String title, double[] samplesUs) throws IOException {
        double[] s = Arrays.stream(samplesUs).filter(v -> v > 0 && Double.isFinite(v)).sorted().toArray();
        if (s.length == 0) {
            s = new double[] {1e-3};
        }
        double lo = s[0];
        double hi = s[s.length - 1];
        if (hi <= lo * 1.0001) {
            hi = lo * 1.01;
            lo = lo * 0.99;
        }
        int bins = Math.max(10, Math.min(80, (int) Math.sqrt(s.length) * 2));
        double step = (Math.log(hi) - Math.log(lo)) / bins;
        long[] counts = new long[bins];
        for (double v : s) {
            int b = (int) ((Math.log(v) - Math.log(lo)) / step);
            counts[Math.max(0, Math.min(bins - 1, b))]++;
        }
        XYIntervalSeries hs = new XYIntervalSeries("samples");
        for (int b = 0; b < bins; b++) {
            double x0 = Math.exp(Math.log(lo) + b * step);
            double x1 = Math.exp(Math.log(lo) + (b + 1) * step);
            hs.add(Math.sqrt(x0 * x1), x0, x1, counts[b], counts[b], counts[b]);
        }
        XYIntervalSeriesCollection hist = new XYIntervalSeriesCollection();
        hist.addSeries(hs);
        LogAxis x = new LogAxis("latency [usec], log scale");
        x.setRange(lo / 1.05, hi * 1.05);
        x.setTickUnit(new org.jfree.chart.axis.NumberTickUnit(hi / lo > 1000 ? 1.0 : 0.5));
        x.setNumberFormatOverride(new java.text.DecimalFormat("#,##0.###"));
        XYBarRenderer bar = new XYBarRenderer(0.05);
        bar.setBarPainter(new StandardXYBarPainter());
        bar.setShadowVisible(false);
        bar.setSeriesPaint(0, new Color(0x3b6ea5));
        XYPlot histPlot = new XYPlot(hist, null, new NumberAxis("count"), bar);
        XYSeries cdf = new XYSeries("CDF");
        int stride = Math.max(1, s.length / 4000);
        for (int i = 0; i < s.length; i += stride) {
            cdf.add(s[i], (i + 1) / (double) s.length);
        }
        cdf.add(s[s.length - 1], 1.0);
        XYLineAndShapeRenderer line = new XYLineAndShapeRenderer(true, false);
        line.setSeriesStroke(0, new BasicStroke(2f));
        line.setSeriesPaint(0, new Color(0xc0392b));
        NumberAxis y = new NumberAxis("cumulative fraction");
        y.setRange(0, 1.0);
        XYPlot cdfPlot = new XYPlot(new XYSeriesCollection(cdf), null, y, line);
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(x);
        plot.add(histPlot, 1);
        plot.add(cdfPlot, 1);
        plot.setGap(10);
        JFreeChart chart = new JFreeChart(title + " (n=" + s.length + ")", JFreeChart.DEFAULT_TITLE_FONT, plot, false);
        chart.setBackgroundPaint(Color.WHITE);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, WIDTH, HEIGHT);
    }

    /** Lines through {xs, ys} per series, optionally on logarithmic axes. */
    public static void lines(Path png, String title, String xLabel, String yLabel, boolean logX, boolean logY,
                             SequencedMap<String, double[][]> series) throws IOException {
        XYSeriesCollection data = new XYSeriesCollection();
        for (Map.Entry<String, double[][]> e : series.entrySet()) {
            XYSeries s = new XYSeries(e.getKey());
            double[] xs = e.getValue()[0];
            double[] ys = e.getValue()[1];
            for (int i = 0; i < xs.length; i++) {
                if ((!logX || xs[i] > 0) && (!logY || ys[i] > 0)) {
                    s.add(xs[i], ys[i]);
                }
            }
            data.addSeries(s);
        }
        ValueAxis x = logX ? new LogAxis(xLabel) : new NumberAxis(xLabel);
        ValueAxis y = logY ? new LogAxis(yLabel) : new NumberAxis(yLabel);
        if (logX) {
            ((LogAxis) x).setBase(2);
            ((LogAxis) x).setStandardTickUnits(NumberAxis.createIntegerTickUnits());
            ((LogAxis) x).setNumberFormatOverride(new java.text.DecimalFormat("#,##0.###"));
        }
        if (logY) {
            ((LogAxis) y).setNumberFormatOverride(new java.text.DecimalFormat("#,##0.######"));
        }
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < series.size(); i++) {
            r.setSeriesStroke(i, new BasicStroke(2f));
        }
        XYPlot plot = new XYPlot(data, x, y, r);
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, WIDTH, HEIGHT);
    }

    /** Grouped bars: one group per category, one bar per series. */
    public static void bars(Path png, String title, String yLabel, String[] categories,
                            SequencedMap<String, double[]> series) throws IOException {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (Map.Entry<String, double[]> e : series.entrySet()) {
            for (int i = 0; i < categories.length; i++) {
                data.addValue(e.getValue()[i], e.getKey(), categories[i]);
            }
        }
        JFreeChart chart = org.jfree.chart.ChartFactory.createBarChart(title, null, yLabel, data);
        chart.setBackgroundPaint(Color.WHITE);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, WIDTH, HEIGHT);
    }
}
