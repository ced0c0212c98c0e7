package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.SendWorkRequest;
import dev.nvmf.verbs.WcOpcode;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import dev.nvmf.verbs.WrOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Compiles a C program against the installed rdma-core and libc headers that prints every offset, size and
 * enum value the Java side relies on, runs it, and compares: the flyweights of dev.nvmf.verbs, the constant
 * classes, and every constant of {@link NativeLayout}. A constant without a C counterpart fails too, so a new
 * constant cannot slip in unchecked.
 */
class NativeLayoutTest {
    private static final List<String> HEADERS = List.of(
            "/usr/include/infiniband/verbs.h", "/usr/include/rdma/rdma_cma.h");

    /** Java constant (Class.FIELD) to C expression. */
    private final Map<String, String> expected = new LinkedHashMap<>();
    private final Map<String, Long> javaValues = new LinkedHashMap<>();
    private final List<String> unmapped = new ArrayList<>();

    @Test
    void everyJavaOffsetSizeAndEnumMatchesTheInstalledHeaders(@TempDir Path dir) throws Exception {
        for (String h : HEADERS) {
            if (!Files.exists(Path.of(h))) {
                fail(h + " is missing: the rdma-core development headers are not installed. Run scripts/setup.sh "
                        + "(Debian: apt-get install libibverbs-dev librdmacm-dev).");
            }
        }
        collectNativeLayout();
        collectFlyweights();
        collectEnums();
        assertTrue(unmapped.isEmpty(), "constants without a C expression to check them against: " + unmapped);

        Map<String, Long> c = runProbe(dir);
        List<String> drift = new ArrayList<>();
        for (Map.Entry<String, String> e : expected.entrySet()) {
            long java = javaValues.get(e.getKey());
            Long native_ = c.get(e.getKey());
            if (native_ == null) {
                drift.add(e.getKey() + ": probe printed nothing");
            } else if (native_ != java) {
                drift.add(e.getKey() + " = " + java + " but " + e.getValue() + " = " + native_);
            }
        }
        assertTrue(drift.isEmpty(), "native layout drift against the installed headers:\n  "
                + String.join("\n  ", drift));
        assertTrue(expected.size() > 150, "suspiciously few constants checked: " + expected.size());
    }

    private void collectNativeLayout() throws IllegalAccessException {
        for (Field f : NativeLayout.class.getDeclaredFields()) {
            if (!isConstant(f)) continue;
            CExpr expr = f.getAnnotation(CExpr.class);
            String key = "NativeLayout." + f.getName();
            if (expr == null) {
                unmapped.add(key);
                continue;
            }
            put(key, expr.value(), ((Number) f.get(null)).longValue());
        }
    }

    private void collectFlyweights() throws IllegalAccessException {
        Map<String, String> send = new LinkedHashMap<>();
        send.put("SIZE", "sizeof(struct ibv_send_wr)");
        send.put("ALIGNMENT", "_Alignof(struct ibv_send_wr)");
        send.put("WR_ID_OFFSET", "offsetof(struct ibv_send_wr, wr_id)");
        send.put("NEXT_OFFSET", "offsetof(struct ibv_send_wr, next)");
        send.put("SG_LIST_OFFSET", "offsetof(struct ibv_send_wr, sg_list)");
        send.put("NUM_SGE_OFFSET", "offsetof(struct ibv_send_wr, num_sge)");
        send.put("OPCODE_OFFSET", "offsetof(struct ibv_send_wr, opcode)");
        send.put("SEND_FLAGS_OFFSET", "offsetof(struct ibv_send_wr, send_flags)");
        send.put("INVALIDATE_RKEY_OFFSET", "offsetof(struct ibv_send_wr, invalidate_rkey)");
        send.put("REMOTE_ADDR_OFFSET", "offsetof(struct ibv_send_wr, wr.rdma.remote_addr)");
        send.put("RKEY_OFFSET", "offsetof(struct ibv_send_wr, wr.rdma.rkey)");
        send.put("BIND_MW_MW_OFFSET", "offsetof(struct ibv_send_wr, bind_mw.mw)");
        send.put("BIND_MW_RKEY_OFFSET", "offsetof(struct ibv_send_wr, bind_mw.rkey)");
        send.put("BIND_MW_MR_OFFSET", "offsetof(struct ibv_send_wr, bind_mw.bind_info.mr)");
        send.put("BIND_MW_ADDR_OFFSET", "offsetof(struct ibv_send_wr, bind_mw.bind_info.addr)");
        send.put("BIND_MW_LENGTH_OFFSET", "offsetof(struct ibv_send_wr, bind_mw.bind_info.length)");
        send.put("BIND_MW_ACCESS_OFFSET", "offsetof(struct ibv_send_wr, bind_mw.bind_info.mw_access_flags)");
        flyweight(SendWorkRequest.class, "struct ibv_send_wr", send);
        // imm_data shares the union with invalidate_rkey.
        put("SendWorkRequest.INVALIDATE_RKEY_OFFSET(imm_data)", "offsetof(struct ibv_send_wr, imm_data)",
                SendWorkRequest.INVALIDATE_RKEY_OFFSET);
        flyweight(RecvWorkRequest.class, "struct ibv_recv_wr", Map.of(
                "SIZE", "sizeof(struct ibv_recv_wr)",
                "ALIGNMENT", "_Alignof(struct ibv_recv_wr)",
                "WR_ID_OFFSET", "offsetof(struct ibv_recv_wr, wr_id)",
                "NEXT_OFFSET", "offsetof(struct ibv_recv_wr, next)",
                "SG_LIST_OFFSET", "offsetof(struct ibv_recv_wr, sg_list)",
                "NUM_SGE_OFFSET", "offsetof(struct ibv_recv_wr, num_sge)"));
        flyweight(ScatterGatherEntry.class, "struct ibv_sge", Map.of(
                "SIZE", "sizeof(struct ibv_sge)",
                "ALIGNMENT", "_Alignof(struct ibv_sge)",
                "ADDR_OFFSET", "offsetof(struct ibv_sge, addr)",
                "LENGTH_OFFSET", "offsetof(struct ibv_sge, length)",
                "LKEY_OFFSET", "offsetof(struct ibv_sge, lkey)"));
        Map<String, String> wc = new LinkedHashMap<>();
        wc.put("SIZE", "sizeof(struct ibv_wc)");
        wc.put("ALIGNMENT", "_Alignof(struct ibv_wc)");
        wc.put("WR_ID_OFFSET", "offsetof(struct ibv_wc, wr_id)");
        wc.put("STATUS_OFFSET", "offsetof(struct ibv_wc, status)");
        wc.put("OPCODE_OFFSET", "offsetof(struct ibv_wc, opcode)");
        wc.put("VENDOR_ERR_OFFSET", "offsetof(struct ibv_wc, vendor_err)");
        wc.put("BYTE_LEN_OFFSET", "offsetof(struct ibv_wc, byte_len)");
        wc.put("INVALIDATED_RKEY_OFFSET", "offsetof(struct ibv_wc, invalidated_rkey)");
        wc.put("QP_NUM_OFFSET", "offsetof(struct ibv_wc, qp_num)");
        wc.put("SRC_QP_OFFSET", "offsetof(struct ibv_wc, src_qp)");
        wc.put("WC_FLAGS_OFFSET", "offsetof(struct ibv_wc, wc_flags)");
        wc.put("WC_WITH_INV", "IBV_WC_WITH_INV");
        wc.put("WC_WITH_IMM", "IBV_WC_WITH_IMM");
        flyweight(WorkCompletion.class, "struct ibv_wc", wc);
    }

    /** Every public static final int of the class must appear in {@code map}. */
    private void flyweight(Class<?> type, String struct, Map<String, String> map) throws IllegalAccessException {
        for (Field f : type.getDeclaredFields()) {
            if (!isConstant(f)) continue;
            String key = type.getSimpleName() + "." + f.getName();
            String expr = map.get(f.getName());
            if (expr == null) {
                unmapped.add(key + " (" + struct + ")");
                continue;
            }
            put(key, expr, ((Number) f.get(null)).longValue());
        }
    }

    private void collectEnums() throws IllegalAccessException {
        prefixed(WrOpcode.class, "IBV_WR_");
        prefixed(WcOpcode.class, "IBV_WC_");
        prefixed(WcStatus.class, "IBV_WC_");
        prefixed(SendFlags.class, "IBV_SEND_");
        prefixed(Access.class, "IBV_ACCESS_");
        prefixed(Errno.class, "");
        for (CmEventType t : CmEventType.values()) {
            if (t != CmEventType.UNKNOWN) put("CmEventType." + t, "RDMA_CM_EVENT_" + t, t.value);
        }
        for (QpState s : QpState.values()) put("QpState." + s, "IBV_QPS_" + s, s.value);
        for (AsyncEvent.Type t : AsyncEvent.Type.values()) {
            if (t != AsyncEvent.Type.UNKNOWN) put("AsyncEvent.Type." + t, "IBV_EVENT_" + t, t.value);
        }
        put("DeviceAttributes.IBV_DEVICE_MEM_MGT_EXTENSIONS", "IBV_DEVICE_MEM_MGT_EXTENSIONS",
                DeviceAttributes.IBV_DEVICE_MEM_MGT_EXTENSIONS);
    }

    private void prefixed(Class<?> type, String prefix) throws IllegalAccessException {
        for (Field f : type.getDeclaredFields()) {
            if (!isConstant(f)) continue;
            put(type.getSimpleName() + "." + f.getName(), prefix + f.getName(), ((Number) f.get(null)).longValue());
        }
    }

    private static boolean isConstant(Field f) {
        int m = f.getModifiers();
        return Modifier.isStatic(m) && Modifier.isFinal(m) && Modifier.isPublic(m)
                && (f.getType() == int.class || f.getType() == long.class);
    }

    private void put(String key, String expr, long value) {
        expected.put(key, expr);
        javaValues.put(key, value);
    }

    private Map<String, Long> runProbe(Path dir) throws IOException, InterruptedException {
        StringBuilder src = new StringBuilder("""
                #include <stdio.h>
                #include <stddef.h>
                #include <errno.h>
                #include <fcntl.h>
                #include <poll.h>
                #include <sys/eventfd.h>
                #include <sys/epoll.h>
                #include <sys/timerfd.h>
                #include <time.h>
                #include <sys/socket.h>
                #include <netinet/in.h>
                #include <infiniband/verbs.h>
                #include <rdma/rdma_cma.h>
                int main(void) {
                """);
        for (Map.Entry<String, String> e : expected.entrySet()) {
            src.append("    printf(\"%s %lld\\n\", \"").append(e.getKey()).append("\", (long long)(")
                    .append(e.getValue()).append("));\n");
        }
        src.append("    return 0;\n}\n");
        Path c = dir.resolve("layout_probe.c");
        Path exe = dir.resolve("layout_probe");
        Files.writeString(c, src);
        String out = exec(dir, "gcc", "-std=gnu11", "-Wall", "-o", exe.toString(), c.toString());
        String printed = exec(dir, exe.toString());
        Map<String, Long> values = new LinkedHashMap<>();
        for (String line : printed.split("\n")) {
            if (line.isBlank()) continue;
            int sp = line.lastIndexOf(' ');
            values.put(line.substring(0, sp), Long.parseLong(line.substring(sp + 1).trim()));
        }
        assertEquals(expected.size(), values.size(), "probe output lines (compiler said: " + out + ")");
        return values;
    }

    private static String exec(Path dir, String... cmd) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new AssertionError(cmd[0] + " cannot run (" + e.getMessage() + "): the layout check needs gcc "
                    + "and the rdma-core headers; run scripts/setup.sh", e);
        }
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(String.join(" ", cmd) + " timed out");
        }
        String text = new String(out, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) fail(String.join(" ", cmd) + " failed (" + p.exitValue() + "):\n" + text);
        return text;
    }
}
