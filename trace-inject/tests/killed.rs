//! A traced process SIGKILLed after running for a while keeps what it recorded up to about a
//! second before: CUPTI's periodic flush hands over only full buffers (the fake libcupti, like
//! the real one, never delivers a buffer that is not full through it), so the records reach
//! the raw file only through the library's own flush thread. The API lines callbacks collect
//! (`OPBENCH_TRACE_API_RECORDS=callback`) are written on the same beat.

mod common;

/// The child of every test: one kernel and its launch call recorded, then SIGKILL after 2.5 s.
fn record_then_get_killed() {
    common::set_records(
        "libcupti.so",
        vec![common::kernel_record("_Z5earlyv", 100, 200)],
    );
    assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
    // SAFETY: the fake's fake_api_call(domain, cbid, correlation, result) -> called.
    unsafe {
        let call: unsafe extern "C" fn(i32, u32, u32, i32) -> i32 =
            common::fake_fn("libcupti.so", "fake_api_call");
        assert_eq!(call(2, 5, 1, 0), 1, "the launch's callback is enabled");
    }
    std::thread::sleep(std::time::Duration::from_millis(2500));
    // SIGKILL: no exit handler runs, nothing more is flushed.
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &std::process::id().to_string()])
        .status();
    std::thread::sleep(std::time::Duration::from_secs(10));
    unreachable!("still alive after SIGKILL");
}

/// Runs test `name`'s child with `env` against the fake libcupti, API calls recorded through
/// callbacks; the raw file's text once the child died of SIGKILL.
fn killed_child_raw(name: &str, env: &[(&str, &str)]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let mut env = env.to_vec();
    env.push(("OPBENCH_TRACE_API_RECORDS", "callback"));
    let (status, text, log) = common::run_child_status(name, tmp.path(), &env);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "{log}");
    text
}

/// With `OPBENCH_TRACE_FLUSH=off` (for measuring what the flushes cost) the same kill loses
/// the record, and the raw file says why.
#[test]
fn without_the_periodic_flush_a_killed_process_loses_its_records_and_says_so() {
    const NAME: &str = "without_the_periodic_flush_a_killed_process_loses_its_records_and_says_so";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        record_then_get_killed();
    }
    let text = killed_child_raw(NAME, &[("OPBENCH_TRACE_FLUSH", "off")]);
    let raw = common::Raw::new(&text);
    assert!(raw.tagged("K").is_empty(), "no flush, no records: {text}");
    assert!(raw.tagged("R").is_empty(), "no flush, no API lines: {text}");
    assert!(
        text.contains("OPBENCH_TRACE_FLUSH=off: no flush thread"),
        "the warning: {text}"
    );
}

/// The flush thread alone (`OPBENCH_TRACE_FLUSH=thread`, CUPTI's flush period not set) keeps
/// the record; CUPTI's period alone (`period`) does not, since it hands over full buffers only.
#[test]
fn the_flush_thread_alone_keeps_a_killed_process_records_and_the_period_alone_does_not() {
    const NAME: &str =
        "the_flush_thread_alone_keeps_a_killed_process_records_and_the_period_alone_does_not";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        record_then_get_killed();
    }
    let text = killed_child_raw(NAME, &[("OPBENCH_TRACE_FLUSH", "thread")]);
    assert_eq!(common::Raw::new(&text).tagged("K").len(), 1, "{text}");
    assert_eq!(common::Raw::new(&text).tagged("R").len(), 1, "{text}");
    assert!(text.contains("flush period not set"), "{text}");
    let text = killed_child_raw(NAME, &[("OPBENCH_TRACE_FLUSH", "period")]);
    assert!(common::Raw::new(&text).tagged("K").is_empty(), "{text}");
    assert!(
        text.contains("OPBENCH_TRACE_FLUSH=period: no flush thread"),
        "{text}"
    );
}

#[test]
fn a_process_killed_after_two_seconds_keeps_its_earlier_records() {
    const NAME: &str = "a_process_killed_after_two_seconds_keeps_its_earlier_records";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        record_then_get_killed();
    }
    let text = killed_child_raw(NAME, &[]);
    let raw = common::Raw::new(&text);
    let k = raw.tagged("K");
    assert_eq!(
        k.len(),
        1,
        "the kernel recorded 2.5 s before the kill: {text}"
    );
    assert_eq!(raw.name(k[0][16]), "_Z5earlyv");
    assert_eq!(raw.tagged("R").len(), 1, "the launch call too: {text}");
    assert!(
        raw.tagged("E").is_empty(),
        "no clean end after SIGKILL: {text}"
    );
}
