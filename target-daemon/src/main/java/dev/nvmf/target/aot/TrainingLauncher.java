package dev.nvmf.target.aot;

import java.io.File;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code java -cp PRODUCT_CLASS_PATH dev.nvmf.target.aot.TrainingLauncher KIT_CLASS_PATH WORKLOAD_CLASS [ARGS...]}:
 * runs {@code WORKLOAD_CLASS.main(ARGS)} loaded from {@code KIT_CLASS_PATH} (jars and folders, ':'-separated; may
 * be empty, then the workload comes from the product class path) by a child of the application class loader, which
 * is also the thread's context class loader. Product classes the workload touches still come from the application
 * class loader, as in {@code nvmf-target serve}: those are what the AOT cache records. Exits 0 when the workload
 * returns, 1 with its stack trace when it throws, 2 on a bad command line.
 */
public final class TrainingLauncher {
    private TrainingLauncher() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: TrainingLauncher KIT_CLASS_PATH WORKLOAD_CLASS [ARGS...]");
            System.exit(2);
        }
        ClassLoader parent = TrainingLauncher.class.getClassLoader();
        int code;
        try (URLClassLoader kit = new URLClassLoader("aot-training-kit", urls(args[0]), parent)) {
            Thread.currentThread().setContextClassLoader(kit);
            MethodHandle main = MethodHandles.publicLookup().findStatic(Class.forName(args[1], true, kit), "main",
                    MethodType.methodType(void.class, String[].class));
            try {
                main.invokeExact(Arrays.copyOfRange(args, 2, args.length));
                code = 0;
            } catch (Throwable t) {
                System.err.println("aot training: " + args[1] + " failed");
                t.printStackTrace();
                code = 1;
            }
        }
        // The JVM writes the AOT configuration at exit; threads the workload left behind must not hold it up.
        System.exit(code);
    }

    private static URL[] urls(String classPath) throws MalformedURLException {
        List<URL> urls = new ArrayList<>();
        for (String entry : classPath.split(File.pathSeparator)) {
            if (!entry.isEmpty()) {
                urls.add(new File(entry).toURI().toURL());
            }
        }
        return urls.toArray(new URL[0]);
    }
}
