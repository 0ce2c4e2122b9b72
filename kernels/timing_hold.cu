//! Holds a stream for a given time (nvbench's "blocking kernel", with a timeout instead of a
//! host flag): enqueued before a timed batch, it keeps the GPU busy while the host queues the
//! batch behind it, so the batch runs back to back and host enqueue time stays out of the events.
//! Touches no memory, so it leaves L2 as it was.

extern "C" __global__ void opbench_hold_ns(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    const long long c0 = clock64();
    // The SM clock bounds the wait too (at most 4 cycles per ns: under 2 x ns at >= 2 GHz,
    // longer only on slower clocks), should the global timer ever stand still.
    const long long max_cycles = 4 * (long long)ns;
    do {
        __nanosleep(500);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns && clock64() - c0 < max_cycles);
}
