/**
 * The entry point of the JDK's AOT cache training run (JEP 483 class loading and linking, JEP 515 method
 * profiles), which {@code bin/nvmf-target --aot-train} starts at package time. Nothing in the daemon uses it.
 *
 * <p>It lives in the product jar for one reason: the JDK uses a cache only with the class path it was trained on
 * (JEP 483, "consistent class path"), so the training JVM must see exactly the product's class path, and its main
 * class must come from there. The workload itself (hosts on the in-process soft fabric) is test code and is loaded
 * by {@link dev.nvmf.target.aot.TrainingLauncher} through a class loader of its own, so none of it lands in the
 * cache as an application class.
 */
package dev.nvmf.target.aot;
