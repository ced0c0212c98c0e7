package dev.nvmf.target.metrics;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A strict-enough parser of the Prometheus text format 0.0.4, for asserting on scrapes. */
record PrometheusText(Map<String, String> types, List<Sample> samples) {
    record Sample(String name, Map<String, String> labels, double value) {}

    static PrometheusText parse(String text) {
        Map<String, String> types = new HashMap<>();
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.split(" ");
                types.put(parts[2], parts[3]);
                continue;
            }
            if (line.startsWith("#")) {
                continue;
            }
            int brace = line.indexOf('{');
            int space = line.lastIndexOf(' ');
            String name;
            Map<String, String> labels = new LinkedHashMap<>();
            if (brace >= 0 && brace < space) {
                name = line.substring(0, brace);
                String body = line.substring(brace + 1, line.lastIndexOf('}'));
                int i = 0;
                while (i < body.length()) {
                    int eq = body.indexOf('=', i);
                    String key = body.substring(i, eq);
                    if (body.charAt(eq + 1) != '"') {
                        throw new IllegalArgumentException("unquoted label value: " + line);
                    }
                    StringBuilder value = new StringBuilder();
                    int j = eq + 2;
                    while (body.charAt(j) != '"') {
                        if (body.charAt(j) == '\\') {
                            j++;
                        }
                        value.append(body.charAt(j++));
                    }
                    labels.put(key, value.toString());
                    i = j + 1;
                    if (i < body.length() && body.charAt(i) == ',') {
                        i++;
                    }
                }
            } else {
                name = line.substring(0, space);
            }
            if (!name.matches("[a-zA-Z_:][a-zA-Z0-9_:]*")) {
                throw new IllegalArgumentException("bad metric name: " + line);
            }
            samples.add(new Sample(name, labels, Double.parseDouble(line.substring(space + 1))));
        }
        return new PrometheusText(types, samples);
    }

    /** The value of the one sample with this name whose labels include {@code match}; fails if not exactly one. */
    double value(String name, Map<String, String> match) {
        List<Sample> found = samples.stream().filter(s -> s.name().equals(name)
                && s.labels().entrySet().containsAll(match.entrySet())).toList();
        if (found.size() != 1) {
            throw new AssertionError(found.size() + " samples of " + name + " " + match + ": " + found);
        }
        return found.get(0).value();
    }
}
