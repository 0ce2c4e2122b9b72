//! The traced program starting its own CUPTI subscriber (torch.profiler's Kineto calls
//! `cuptiActivityRegisterCallbacks`; with `trace`'s LD_PRELOAD the call reaches the library's
//! interposed function, called directly here): the library writes what it had and an `L` line,
//! disables its kinds, and the program's callbacks are registered with the libcupti it meant,
//! so its own profiler receives the records afterwards, as untraced.

use std::sync::atomic::{AtomicUsize, Ordering};

mod common;

/// Records the program's own "profiler" received.
static RECEIVED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn requested(buffer: *mut *mut u8, size: *mut usize, max: *mut usize) {
    let b: &'static mut [u64] = Box::leak(vec![0u64; 4096].into_boxed_slice());
    // SAFETY: out-pointers from the fake libcupti.
    unsafe {
        *buffer = b.as_mut_ptr() as *mut u8;
        *size = 4096 * 8;
        *max = 0;
    }
}

unsafe extern "C" fn completed(
    _ctx: cudarc::driver::sys::CUcontext,
    _stream: u32,
    _buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    if valid > 0 {
        RECEIVED.fetch_add(1, Ordering::SeqCst);
    }
}

type Count = unsafe extern "C" fn() -> i32;

/// The program's part: `trace` records one kernel, then the program registers its callbacks
/// and flushes its own records (a second kernel) through the libcupti `program_lib`.
fn program(program_lib: &str) {
    common::set_records(
        "libcupti.so",
        vec![common::kernel_record("_Z6beforev", 100, 200)],
    );
    assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
    // SAFETY: the callbacks live for the process; the fake's functions have these signatures.
    unsafe {
        let r =
            opbench_trace_inject::cuptiActivityRegisterCallbacks(Some(requested), Some(completed));
        assert_eq!(r as u32, 0, "the program's registration succeeds");
        let is_theirs: unsafe extern "C" fn(*const ()) -> i32 =
            common::fake_fn(program_lib, "fake_completed_is");
        assert_eq!(
            is_theirs(completed as *const ()),
            1,
            "registered with {program_lib}"
        );
        let enabled: Count = common::fake_fn("libcupti.so", "fake_enabled");
        assert_eq!(enabled(), 0, "the tracer's kinds are all disabled");
        common::set_records(
            program_lib,
            vec![common::kernel_record("_Z5afterv", 300, 400)],
        );
        let flush: unsafe extern "C" fn(u32) -> i32 =
            common::fake_fn(program_lib, "cuptiActivityFlushAll");
        flush(1);
    }
    assert_eq!(
        RECEIVED.load(Ordering::SeqCst),
        1,
        "the program's profiler got its records"
    );
}

/// The raw file of a hand-over: the kernel before it, the `L` line, no kernel after it, and a
/// clean end.
fn check_raw(text: &str) {
    let raw = common::Raw::new(text);
    let k = raw.tagged("K");
    assert_eq!(k.len(), 1, "{text}");
    assert_eq!(raw.name(k[0][16]), "_Z6beforev");
    let l = raw.tagged("L");
    assert_eq!(l.len(), 1, "{text}");
    assert!(
        l[0][1].parse::<u64>().unwrap() > 0,
        "the time of the hand-over: {text}"
    );
    assert!(l[0][2].contains("cuptiActivityRegisterCallbacks"), "{text}");
    assert_eq!(raw.lines.last().unwrap()[..2], ["E", "exit"], "{text}");
}

#[test]
fn the_programs_own_subscriber_gets_the_records_and_the_file_says_from_when_they_are_lost() {
    const NAME: &str =
        "the_programs_own_subscriber_gets_the_records_and_the_file_says_from_when_they_are_lost";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        program("libcupti.so");
        // SAFETY: the fake's function.
        let finalized: Count = unsafe { common::fake_fn("libcupti.so", "fake_finalized") };
        // SAFETY: as above.
        assert_eq!(unsafe { finalized() }, 0, "one libcupti: not detached");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    check_raw(&common::run_child(NAME, tmp.path()));
}

#[test]
fn a_program_with_its_own_libcupti_gets_it_and_the_tracers_is_detached() {
    const NAME: &str = "a_program_with_its_own_libcupti_gets_it_and_the_tracers_is_detached";
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("theirs");
    if std::env::var_os(common::CHILD_ENV).is_some() {
        // The program's libcupti (torch's bundled one) is loaded first, privately.
        let theirs = std::env::var("THEIRS").unwrap();
        // SAFETY: loads it (RTLD_NOW, RTLD_LOCAL).
        let _: Count = unsafe { common::fake_fn(&theirs, "fake_finalized") };
        program(&theirs);
        // SAFETY: the fakes' functions.
        unsafe {
            let ours: Count = common::fake_fn("libcupti.so", "fake_finalized");
            assert_eq!(ours(), 1, "the tracer's libcupti detached");
            let regs: Count = common::fake_fn("libcupti.so", "fake_registrations");
            assert_eq!(regs(), 1, "only the tracer registered with its libcupti");
        }
        return;
    }
    std::fs::create_dir_all(&theirs).unwrap();
    common::build_fake(tmp.path());
    common::build_fake_as(&theirs, "libcupti.so.12");
    let lib = theirs.join("libcupti.so.12");
    check_raw(&common::run_child_with(
        NAME,
        tmp.path(),
        &[("THEIRS", lib.to_str().unwrap())],
    ));
}

#[test]
fn a_programs_subscription_to_the_callback_api_is_accepted_after_the_tracer_detaches() {
    const NAME: &str =
        "a_programs_subscription_to_the_callback_api_is_accepted_after_the_tracer_detaches";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        common::set_records(
            "libcupti.so",
            vec![common::kernel_record("_Z6beforev", 100, 200)],
        );
        assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
        let mut sub: cudarc::cupti::sys::CUpti_SubscriberHandle = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; no callback is called by the fake.
        let r =
            unsafe { opbench_trace_inject::cuptiSubscribe(&mut sub, None, std::ptr::null_mut()) };
        assert_eq!(r as u32, 0, "the program's subscription succeeds");
        // SAFETY: the fake's functions.
        unsafe {
            let subs: Count = common::fake_fn("libcupti.so", "fake_subscribers");
            assert_eq!(subs(), 1);
            let finalized: Count = common::fake_fn("libcupti.so", "fake_finalized");
            assert_eq!(finalized(), 1, "the tracer detached");
            let enabled: Count = common::fake_fn("libcupti.so", "fake_enabled");
            assert_eq!(enabled(), 0, "the tracer's kinds are all disabled");
        }
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    // With API records through callbacks the library holds a subscriber of its own, which
    // must go before the program's can come.
    for env in [vec![], vec![("OPBENCH_TRACE_API_RECORDS", "callback")]] {
        let text = common::run_child_with(NAME, tmp.path(), &env);
        let raw = common::Raw::new(&text);
        let k = raw.tagged("K");
        assert_eq!(
            k.len(),
            1,
            "the kernel before the subscription is kept: {text}"
        );
        let l = raw.tagged("L");
        assert_eq!(l.len(), 1, "{text}");
        assert!(l[0][2].contains("cuptiSubscribe"), "{text}");
        assert_eq!(raw.lines.last().unwrap()[..2], ["E", "exit"], "{text}");
    }
}

/// The injection library as cargo built it for this test (the cdylib beside the test binary).
fn cdylib() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().join("libopbench_trace_inject.so");
    assert!(lib.is_file(), "{} not built", lib.display());
    lib
}

#[test]
fn preloaded_the_library_intercepts_a_programs_ordinary_call_into_libcupti() {
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/preload_probe.c");
    let probe = tmp.path().join("probe");
    let st = std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .arg(&src)
        .arg("-o")
        .arg(&probe)
        .arg(format!("-L{}", tmp.path().display()))
        .arg(format!("-Wl,-rpath,{}", tmp.path().display()))
        .args(["-lcupti", "-ldl"])
        .status()
        .expect("a C compiler (cc) builds the probe");
    assert!(st.success(), "compiling {}", src.display());
    let raw = tmp.path().join("raw");
    std::fs::create_dir(&raw).unwrap();
    let o = std::process::Command::new(&probe)
        .env("LD_PRELOAD", cdylib())
        .env("LD_LIBRARY_PATH", tmp.path())
        .env("OPBENCH_TRACE_DIR", &raw)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let file = std::fs::read_dir(&raw)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    let raw = common::Raw::new(&text);
    assert_eq!(raw.tagged("L").len(), 1, "{text}");
    assert_eq!(raw.lines.last().unwrap()[..2], ["E", "exit"], "{text}");
}
