/**
 * The entry point of the JDK's AOT cache training run (JEP 483 class loading and linking, JEP 515 method
 * profiles), which {@code bin/nvmf-target --aot-train} starts at package time. Nothing in the daemon uses it.
 *
 * <p>It lives in the product jar for one reason: a cache belongs to the class path it was trained with (JEP 483;
 * java(1), "Ahead-of-Time Cache"), so the training JVM must have exactly the daemon's class path, and its main class
 * must come from there. The workload (hosts on the in-process soft fabric) is test code; {@link
 * dev.nvmf.target.aot.TrainingLauncher} loads it through a class loader of its own. The JDK links ahead of time only
 * classes of the boot, platform and application loaders, so none of the workload's classes is loaded when the
 * daemon starts with the cache. (Appended to the class path instead, they were: Temurin 25.0.3 loads a cache's
 * application classes without checking the class path; docs/performance.md, section 3.)
 */
package dev.nvmf.target.aot;
