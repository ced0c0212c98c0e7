package dev.nvmf.target.config;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * NVMe Qualified Names (NVMe Base 2.0 section 4.5). Two forms:
 * <ul>
 *   <li>{@code nqn.yyyy-mm.reverse.domain} optionally followed by {@code :} and any string, where yyyy-mm is a
 *       month in which the naming authority owned the domain;</li>
 *   <li>{@code nqn.2014-08.org.nvmexpress:uuid:} followed by a UUID in 8-4-4-4-12 hex form.</li>
 * </ul>
 * At most 223 bytes of UTF-8.
 */
public final class Nqn {
    public static final int MAX_BYTES = 223;
    /** The well-known discovery subsystem NQN; no configured subsystem may use it. */
    public static final String DISCOVERY = "nqn.2014-08.org.nvmexpress.discovery";
    static final String UUID_PREFIX = "nqn.2014-08.org.nvmexpress:uuid:";

    private static final Pattern DATE = Pattern.compile("nqn\\.(\\d{4})-(\\d{2})\\.(.*)", Pattern.DOTALL);
    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?");
    private static final Pattern UUID_FORM =
            Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    private Nqn() {}

    /** @return null if {@code nqn} is valid, otherwise why not (one sentence, no trailing period) */
    public static String problem(String nqn) {
        int bytes = nqn.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_BYTES) {
            return "NQN is " + bytes + " bytes long, at most " + MAX_BYTES + " are allowed (NVMe Base 2.0 section 4.5)";
        }
        if (nqn.startsWith(UUID_PREFIX)) {
            String uuid = nqn.substring(UUID_PREFIX.length());
            return UUID_FORM.matcher(uuid).matches() ? null
                    : "'" + nqn + "' is not a valid NQN: after '" + UUID_PREFIX
                      + "' a UUID like 3fa85f64-5717-4562-b3fc-2c963f66afa6 must follow (NVMe Base 2.0 section 4.5)";
        }
        var m = DATE.matcher(nqn);
        if (!m.matches()) {
            return "'" + nqn + "' is not a valid NQN: expected nqn.yyyy-mm.reverse-domain[:identifier] or "
                   + UUID_PREFIX + "UUID (NVMe Base 2.0 section 4.5)";
        }
        int year = Integer.parseInt(m.group(1));
        int month = Integer.parseInt(m.group(2));
        if (month < 1 || month > 12 || year < 1970) {
            return "'" + nqn + "' is not a valid NQN: '" + m.group(1) + "-" + m.group(2)
                   + "' is not a valid yyyy-mm date (NVMe Base 2.0 section 4.5)";
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
            return "'" + nqn + "' is not a valid NQN: '" + domain
                   + "' is not a reversed domain name such as com.example (NVMe Base 2.0 section 4.5)";
        }
        if (colon >= 0 && colon == rest.length() - 1) {
            return "'" + nqn + "' is not a valid NQN: nothing follows the ':' (NVMe Base 2.0 section 4.5)";
        }
        return null;
    }

    public static boolean isValid(String nqn) {
        return problem(nqn) == null;
    }
}
