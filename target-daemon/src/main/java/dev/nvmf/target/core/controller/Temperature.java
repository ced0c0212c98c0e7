package dev.nvmf.target.core.controller;

import dev.nvmf.target.nvme.Features;

/**
 * A controller's temperature as it reports it, and its Temperature Threshold feature (NVMe Base 2.0, 5.27.1.4;
 * SMART / Health log, critical warning bit 1). The target has no sensor: the composite temperature is a constant
 * room temperature, and the warning (WCTEMP) and critical (CCTEMP) thresholds of Identify Controller lie above it,
 * so a host sees a consistent, healthy device. A host may move the over or under threshold; the warning follows.
 *
 * <p>Only the composite temperature exists (TMPSEL 0; TMPSEL Fh on Set Features means every sensor, which is the
 * same one). Thread-safe: set on the admin queue's poller, read by Get Log Page.
 */
public final class Temperature {
    /** The composite temperature SMART reports: 25 &deg;C in Kelvin. */
    public static final int COMPOSITE_KELVIN = 273 + 25;
    /** WCTEMP: the warning composite temperature threshold, 70 &deg;C (the default over threshold). */
    public static final int WARNING_KELVIN = 273 + 70;
    /** CCTEMP: the critical composite temperature threshold, 85 &deg;C. */
    public static final int CRITICAL_KELVIN = 273 + 85;
    /** The default under threshold: none (0 K). */
    public static final int DEFAULT_UNDER_KELVIN = 0;

    private int over = WARNING_KELVIN;
    private int under = DEFAULT_UNDER_KELVIN;

    /** The threshold THSEL names ({@link Features#THSEL_OVER} or {@link Features#THSEL_UNDER}). */
    public synchronized int threshold(int thsel) {
        return thsel == Features.THSEL_OVER ? over : under;
    }

    public static int defaultThreshold(int thsel) {
        return thsel == Features.THSEL_OVER ? WARNING_KELVIN : DEFAULT_UNDER_KELVIN;
    }

    /** Sets the threshold THSEL names; returns whether the warning is on now and was not before. */
    public synchronized boolean threshold(int thsel, int kelvin) {
        boolean before = warning();
        if (thsel == Features.THSEL_OVER) {
            over = kelvin;
        } else {
            under = kelvin;
        }
        return warning() && !before;
    }

    /** SMART critical warning bit 1: the temperature is at or above the over threshold, or at or below the under one. */
    public synchronized boolean warning() {
        return COMPOSITE_KELVIN >= over || COMPOSITE_KELVIN <= under;
    }
}
