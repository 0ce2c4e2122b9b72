//! A traced process SIGKILLed after running for a while keeps what it recorded up to about a
//! second before: CUPTI's periodic flush hands over only full buffers (the fake libcupti, like
//! the real one, never delivers a buffer that is not full through it), so the records reach
//! the raw file only through the library's own flush thread.

mod common;

#[test]
fn a_process_killed_after_two_seconds_keeps_its_earlier_records() {
    const NAME: &str = "a_process_killed_after_two_seconds_keeps_its_earlier_records";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        common::set_records(
            "libcupti.so",
            vec![common::kernel_record("_Z5earlyv", 100, 200)],
        );
        assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
        std::thread::sleep(std::time::Duration::from_millis(2500));
        // SIGKILL: no exit handler runs, nothing more is flushed.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &std::process::id().to_string()])
            .status();
        std::thread::sleep(std::time::Duration::from_secs(10));
        unreachable!("still alive after SIGKILL");
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let (status, text, log) = common::run_child_status(NAME, tmp.path(), &[]);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "{log}");
    let raw = common::Raw::new(&text);
    let k = raw.tagged("K");
    assert_eq!(
        k.len(),
        1,
        "the kernel recorded 2.5 s before the kill: {text}"
    );
    assert_eq!(raw.name(k[0][16]), "_Z5earlyv");
    assert!(
        raw.tagged("E").is_empty(),
        "no clean end after SIGKILL: {text}"
    );
}
