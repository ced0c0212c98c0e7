package dev.nvmf.target.rdma.support;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Does ahead of a zero-allocation measurement what HotSpot otherwise does, once per class, on the thread that asks
 * for a method's C2 compilation: {@code CompileBroker::compile_method} (HotSpot compileBroker.cpp) resolves every
 * String literal of the method's class ({@code ConstantPool::resolve_string_constants}: a {@code java.lang.String}
 * and its {@code byte[]} per literal never run before, such as a log or exception message) and loads the classes of
 * its signature. The thread that crosses the compile threshold is the I/O thread, and when it
 * crosses it depends on the compile queue, so without this a round of I/O shows 72 to 936 bytes at random: 24 + 24 and
 * 24 + 56 for RamBackend's "ram" and "RAM backend size must be positive: ", 24 + 24, 24 + 32 and 24 + 32 for the
 * three log patterns of NvmeQueue, 9 strings of RdmaTransport (JFR allocation events with -XX:-UseTLAB, stacks ending in
 * the compiled frame that asked). After this, asking allocates nothing, and a round measures the target's code alone.
 */
public final class CompileRequestWarmup {
    private CompileRequestWarmup() {}

    /** Resolves the String literals and the signature classes of every class in the code sources of {@code roots}. */
    public static int resolve(Class<?>... roots) throws ReflectiveOperationException, IOException, URISyntaxException {
        Object langAccess = Class.forName("jdk.internal.access.SharedSecrets").getMethod("getJavaLangAccess").invoke(null);
        Method constantPoolOf = Class.forName("jdk.internal.access.JavaLangAccess").getMethod("getConstantPool", Class.class);
        Class<?> pool = Class.forName("jdk.internal.reflect.ConstantPool");
        Method size = pool.getMethod("getSize");
        Method tag = pool.getMethod("getTagAt", int.class);
        Method string = pool.getMethod("getStringAt", int.class);
        Object stringTag = Enum.valueOf(Class.forName("jdk.internal.reflect.ConstantPool$Tag").asSubclass(Enum.class), "STRING");
        int strings = 0;
        for (Class<?> root : roots) {
            Path source = Path.of(root.getProtectionDomain().getCodeSource().getLocation().toURI());
            List<String> names;
            try (FileSystem jar = Files.isDirectory(source) ? null : FileSystems.newFileSystem(source)) {
                Path base = jar == null ? source : jar.getPath("/");
                try (Stream<Path> files = Files.walk(base)) {
                    names = files.map(p -> base.relativize(p).toString()).filter(n -> n.endsWith(".class")
                            && !n.contains("-")).map(n -> n.substring(0, n.length() - 6).replace('/', '.')).toList();
                }
            }
            for (String name : names) {
                Class<?> c = Class.forName(name, false, root.getClassLoader());
                c.getDeclaredMethods(); // loads the classes of every signature, as load_signature_classes would
                Object cp = constantPoolOf.invoke(langAccess, c);
                int n = (int) size.invoke(cp);
                for (int i = 1; i < n; i++) {
                    if (tag.invoke(cp, i) == stringTag) {
                        string.invoke(cp, i);
                        strings++;
                    }
                }
            }
        }
        return strings;
    }
}
