package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.Errno;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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

/**
 * The libc binding's flag values, ioctl numbers and struct statx offsets against the installed headers (a C program
 * prints them), and the calls the backends make on a real file.
 */
class LibcTest {
    /** Every public constant of Libc and the C expression it must equal. */
    private static final Map<String, String> C = new LinkedHashMap<>();

    static {
        C.put("O_RDONLY", "O_RDONLY");
        C.put("O_RDWR", "O_RDWR");
        C.put("O_CREAT", "O_CREAT");
        C.put("O_EXCL", "O_EXCL");
        C.put("O_CLOEXEC", "O_CLOEXEC");
        C.put("O_DIRECT", "O_DIRECT");
        C.put("SEEK_END", "SEEK_END");
        C.put("FALLOC_FL_KEEP_SIZE", "FALLOC_FL_KEEP_SIZE");
        C.put("FALLOC_FL_PUNCH_HOLE", "FALLOC_FL_PUNCH_HOLE");
        C.put("FALLOC_FL_ZERO_RANGE", "FALLOC_FL_ZERO_RANGE");
        C.put("RWF_DSYNC", "RWF_DSYNC");
        C.put("BLKGETSIZE64", "BLKGETSIZE64");
        C.put("BLKSSZGET", "BLKSSZGET");
        C.put("BLKPBSZGET", "BLKPBSZGET");
        C.put("BLKZEROOUT", "BLKZEROOUT");
        C.put("BLKDISCARD", "BLKDISCARD");
        C.put("BLKROGET", "BLKROGET");
        C.put("BLKIOOPT", "BLKIOOPT");
        C.put("BLKDISCARDZEROES", "BLKDISCARDZEROES");
        C.put("AT_EMPTY_PATH", "AT_EMPTY_PATH");
        C.put("STATX_DIOALIGN", "STATX_DIOALIGN");
        C.put("STATX_SIZE", "sizeof(struct statx)");
        C.put("STATX_MASK_OFFSET", "offsetof(struct statx, stx_mask)");
        C.put("STATX_DIO_MEM_ALIGN_OFFSET", "offsetof(struct statx, stx_dio_mem_align)");
        C.put("STATX_DIO_OFFSET_ALIGN_OFFSET", "offsetof(struct statx, stx_dio_offset_align)");
        C.put("CPU_SETSIZE", "CPU_SETSIZE");
    }

    @Test
    void everyConstantMatchesTheInstalledHeaders(@TempDir Path dir) throws Exception {
        Map<String, Long> java = new LinkedHashMap<>();
        List<String> unmapped = new ArrayList<>();
        for (Field f : Libc.class.getDeclaredFields()) {
            int m = f.getModifiers();
            if (Modifier.isPublic(m) && Modifier.isStatic(m) && Modifier.isFinal(m)
                    && (f.getType() == int.class || f.getType() == long.class)) {
                if (!C.containsKey(f.getName())) {
                    unmapped.add(f.getName());
                }
                java.put(f.getName(), ((Number) f.get(null)).longValue());
            }
        }
        assertTrue(unmapped.isEmpty(), "Libc constants without a C expression to check: " + unmapped);
        StringBuilder src = new StringBuilder("""
                #define _GNU_SOURCE
                #include <stdio.h>
                #include <stddef.h>
                #include <fcntl.h>
                #include <unistd.h>
                #include <linux/stat.h>  /* the kernel's struct statx: glibc 2.36's lacks the DIO fields */
                #include <sys/uio.h>
                #include <sys/ioctl.h>
                #include <linux/fs.h>
                #include <linux/falloc.h>
                #include <sched.h>
                int main(void) {
                """);
        for (var e : C.entrySet()) {
            src.append("  printf(\"%s %lld\\n\", \"").append(e.getKey()).append("\", (long long) (")
                    .append(e.getValue()).append("));\n");
        }
        src.append("  return 0;\n}\n");
        Path c = dir.resolve("probe.c");
        Files.writeString(c, src);
        Path exe = dir.resolve("probe");
        run(dir, "cc", "-o", exe.toString(), c.toString());
        String out = run(dir, exe.toString());
        Map<String, Long> native_ = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            String[] kv = line.trim().split(" ");
            native_.put(kv[0], Long.parseLong(kv[1]));
        }
        List<String> drift = new ArrayList<>();
        for (var e : java.entrySet()) {
            long cValue = native_.get(e.getKey());
            // ioctl numbers are unsigned long in C; compare the low 32 bits of the request encoding.
            if (cValue != e.getValue() && (cValue & 0xFFFF_FFFFL) != (e.getValue() & 0xFFFF_FFFFL)) {
                drift.add(e.getKey() + " = " + e.getValue() + " but " + C.get(e.getKey()) + " = " + cValue);
            }
        }
        assertTrue(drift.isEmpty(), "libc constants drift from the installed headers:\n  " + String.join("\n  ", drift));
    }

    /** What a new thread saw when it pinned itself to {@code cpu}: pinCurrentThread's errno, then its mask. */
    private record Pinned(int errno, List<Integer> cpusAfter) {}

    private static Pinned pinOnANewThread(int cpu) throws InterruptedException {
        Pinned[] seen = new Pinned[1];
        Thread t = new Thread(() -> {
            int errno = Libc.pinCurrentThread(List.of(cpu));
            seen[0] = new Pinned(errno, Libc.currentThreadCpus());
        });
        t.start();
        t.join(10_000);
        assertTrue(seen[0] != null, "the thread did not finish");
        return seen[0];
    }

    /** A thread pinned to one CPU of those it may use runs only there; the mask read back says so. */
    @Test
    void aThreadPinnedToOneCpuReadsBackThatCpuAlone() throws Exception {
        List<Integer> allowed = Libc.currentThreadCpus();
        assertTrue(!allowed.isEmpty(), "sched_getaffinity gave no CPU");
        int cpu = allowed.get(allowed.size() - 1);
        Pinned p = pinOnANewThread(cpu);
        assertEquals(0, p.errno(), Errno.describe(p.errno()));
        assertEquals(List.of(cpu), p.cpusAfter());
        assertEquals(allowed, Libc.currentThreadCpus(), "the calling thread's own mask is unchanged");
    }

    /** A CPU outside the process's mask (the last a cpu_set_t holds) cannot be had: EINVAL, the mask unchanged. */
    @Test
    void pinningToACpuThisProcessMayNotUseIsEinval() throws Exception {
        List<Integer> allowed = Libc.currentThreadCpus();
        int cpu = Libc.CPU_SETSIZE - 1;
        org.junit.jupiter.api.Assumptions.assumeFalse(allowed.contains(cpu), "this machine has CPU " + cpu);
        Pinned p = pinOnANewThread(cpu);
        assertEquals(22, p.errno(), "EINVAL");
        assertEquals(allowed, p.cpusAfter());
    }

    @Test
    void fileCallsReportErrnoAndDescribeNamesIt(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("f"), "x".repeat(4096));
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Libc.allocateCapture(a);
            int fd = Libc.open(cap, a.allocateFrom(file.toString()), Libc.O_RDONLY | Libc.O_CLOEXEC, 0);
            assertTrue(fd >= 0, "open: " + Errno.describe(Libc.errno(cap)));
            assertEquals(4096, Libc.lseek(cap, fd, 0, Libc.SEEK_END));
            MemorySegment buf = a.allocate(16, 8);
            assertEquals(16, Libc.pread(cap, fd, buf.address(), 16, 0));
            assertEquals('x', buf.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
            assertEquals(-1, Libc.pwrite(cap, fd, buf.address(), 16, 0), "written through a read-only fd");
            assertEquals(Errno.EBADF, Libc.errno(cap));
            assertEquals(0, Libc.close(cap, fd));
            int missing = Libc.open(cap, a.allocateFrom(dir.resolve("nope").toString()), Libc.O_RDONLY, 0);
            assertEquals(-1, missing);
            assertEquals("ENOENT (No such file or directory)", Errno.describe(-Libc.errno(cap)));
        }
    }

    /** Errno's texts are the C library's, for every value it names; other values have none. */
    @Test
    void errnoTextsAreTheCLibrarys() throws Exception {
        int checked = 0;
        for (Field f : Errno.class.getDeclaredFields()) {
            int m = f.getModifiers();
            if (Modifier.isPublic(m) && Modifier.isStatic(m) && f.getType() == int.class) {
                int e = f.getInt(null);
                assertEquals(Libc.strerror(e), Errno.message(e), f.getName());
                assertEquals(f.getName() + " (" + Libc.strerror(e) + ")", Errno.describe(-e));
                checked++;
            }
        }
        assertTrue(checked >= 30, "checked " + checked);
        assertEquals(null, Errno.message(61));
        assertEquals("errno 61", Errno.describe(61));
    }

    private static String run(Path dir, String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "timed out: " + String.join(" ", cmd));
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + ":\n" + out);
        return out;
    }
}
