package dev.nvmf.target.config;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * NVMe Qualified Names, as this target accepts them and as the specification writes them.
 *
 * <p>Accepted ({@link #problem}) is what the Linux kernel target and the Linux host accept: 1 to 223 bytes of UTF-8
 * text without control characters (so no NUL). The kernel target takes any configfs directory name as a subsystem
 * NQN (kernel configfs.c, nvmet_subsys_make refuses only the discovery NQN) and the host any string shorter than its
 * 223-byte limit (kernel host fabrics.c, nvmf_parse_options), which is how nvmetcli's {@code testnqn} and blktests'
 * {@code blktests-subsystem-1} work there. Refusing them would keep an imported kernel configuration from starting.
 *
 * <p>The specification's form ({@link #nonconformance}, reported as a warning) is one of (NVMe Base 2.0 section
 * 4.5, "NVMe Qualified Names"):
 * <ul>
 *   <li>{@code nqn.yyyy-mm.reverse.domain} optionally followed by {@code :} and any string, where yyyy-mm is a
 *       month in which the naming authority owned the domain;</li>
 *   <li>{@code nqn.2014-08.org.nvmexpress:uuid:} followed by a UUID in 8-4-4-4-12 hex form.</li>
 * </ul>
 */
public final class Nqn {
    public static final int MAX_BYTES = Limits.NQN_MAX_BYTES;
    /** The well-known discovery subsystem NQN; no configured subsystem may use it. */
    public static final String DISCOVERY = "nqn.2014-08.org.nvmexpress.discovery";
    static final String UUID_PREFIX = "nqn.2014-08.org.nvmexpress:uuid:";
    private static final String SPEC = "NVMe Base 2.0 section 4.5";

    private static final Pattern DATE = Pattern.compile("nqn\\.(\\d{4})-(\\d{2})\\.(.*)", Pattern.DOTALL);
    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?");
    private static final Pattern UUID_FORM =
            Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    private Nqn() {}

    /**
     * @return null if the kernel target and the Linux host would accept {@code nqn}, otherwise why not (one
     *         sentence, no trailing period)
     */
    public static String problem(String nqn) {
        if (nqn.isEmpty()) {
            return "an NQN cannot be empty";
        }
        int bytes = nqn.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_BYTES) {
            return "NQN is " + bytes + " bytes long, at most " + MAX_BYTES + " are allowed (" + SPEC + ")";
        }
        for (int i = 0; i < nqn.length(); i++) {
            char c = nqn.charAt(i);
            if (Character.isISOControl(c)) {
                return "NQN '" + printable(nqn) + "' contains the control character U+"
                        + String.format("%04X", (int) c) + " at position " + (i + 1) + "; an NQN is printable text";
            }
        }
        return null;
    }

    /**
     * @return null if {@code nqn} has one of the two forms of the specification, otherwise how it differs (for a
     *         warning: the name is accepted, but hosts other than Linux may refuse it)
     */
    public static String nonconformance(String nqn) {
        if (nqn.startsWith(UUID_PREFIX)) {
            String uuid = nqn.substring(UUID_PREFIX.length());
            return UUID_FORM.matcher(uuid).matches() ? null
                    : "'" + nqn + "' does not follow " + SPEC + ": after '" + UUID_PREFIX
                      + "' a UUID like 3fa85f64-5717-4562-b3fc-2c963f66afa6 must follow";
        }
        var m = DATE.matcher(nqn);
        if (!m.matches()) {
            return "'" + nqn + "' does not follow " + SPEC + " (nqn.yyyy-mm.reverse-domain[:identifier] or "
                   + UUID_PREFIX + "UUID)";
        }
        int year = Integer.parseInt(m.group(1));
        int month = Integer.parseInt(m.group(2));
        if (month < 1 || month > 12 || year < 1970) {
            return "'" + nqn + "' does not follow " + SPEC + ": '" + m.group(1) + "-" + m.group(2)
                   + "' is not a valid yyyy-mm date";
        }
        String rest = m.group(3);
        int colon = rest.indexOf(':');
        String domain = colon < 0 ? rest : rest.substring(0, colon);
        String[] labels = domain.split("\\.", -1);
        boolean ok = labels.length >= 2;
        for (String label : labels) {
            ok &= LABEL.matcher(label).matches();
        }
        if (!ok) {
            return "'" + nqn + "' does not follow " + SPEC + ": '" + domain
                   + "' is not a reversed domain name such as com.example";
        }
        if (colon >= 0 && colon == rest.length() - 1) {
            return "'" + nqn + "' does not follow " + SPEC + ": nothing follows the ':'";
        }
        return null;
    }

    /** Accepted by the kernel target and the Linux host ({@link #problem} is null). */
    public static boolean isAccepted(String nqn) {
        return problem(nqn) == null;
    }

    /** In the specification's form ({@link #nonconformance} is null). */
    public static boolean isConforming(String nqn) {
        return nonconformance(nqn) == null;
    }

    /** Control characters shown as \\uXXXX, so that a message about one stays on one line. */
    private static String printable(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            b.append(Character.isISOControl(c) ? String.format("\\u%04X", (int) c) : String.valueOf(c));
        }
        return b.toString();
    }
}
