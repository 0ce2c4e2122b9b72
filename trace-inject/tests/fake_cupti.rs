//! The injection library against a stand-in libcupti (`fake_cupti.c`, compiled with `cc`):
//! records laid out with cudarc's CUDA 13.0 structs go through the buffer callbacks into the
//! raw file, NVTX ranges through the NVTX injection entry, and the exit handler closes the file.
//! The traced part runs in a child process (`common::run_child`: the library's state is per
//! process, and libcupti is found through LD_LIBRARY_PATH, set before the process starts).

use cudarc::cupti::sys::{
    CUpti_ActivityAPI as ApiRec, CUpti_ActivityDevice5 as DeviceRec,
    CUpti_ActivityGraphTrace2 as GraphRec, CUpti_ActivityKernel10 as KernelRec,
    CUpti_ActivityKind as Kind, CUpti_ActivityMemcpy6 as MemcpyRec,
    CUpti_ActivityMemset4 as MemsetRec,
};
use std::ffi::CString;
use std::ptr::addr_of_mut;

mod common;

/// The traced process: records handed to the fake, both entry points called, NVTX handlers
/// used, then a normal exit (the library's exit handler flushes and closes the file).
fn child() {
    let kname: &'static CString = Box::leak(Box::new(CString::new("_Z6kernelPf").unwrap()));
    let gname: &'static CString = Box::leak(Box::new(CString::new("Fake H100").unwrap()));
    // SAFETY (every closure below): the pointer is to a zeroed buffer of the record's size;
    // fields are written unaligned.
    let recs: Vec<Vec<u8>> = vec![
        common::record::<DeviceRec>(|d| unsafe {
            addr_of_mut!((*d).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_DEVICE);
            addr_of_mut!((*d).id).write_unaligned(0);
            addr_of_mut!((*d).name).write_unaligned(gname.as_ptr());
            addr_of_mut!((*d).computeCapabilityMajor).write_unaligned(9);
            addr_of_mut!((*d).computeCapabilityMinor).write_unaligned(0);
            addr_of_mut!((*d).numMultiprocessors).write_unaligned(132);
            addr_of_mut!((*d).globalMemorySize).write_unaligned(80 << 30);
        }),
        common::record::<ApiRec>(|a| unsafe {
            addr_of_mut!((*a).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_RUNTIME);
            addr_of_mut!((*a).cbid).write_unaligned(211);
            addr_of_mut!((*a).start).write_unaligned(100);
            addr_of_mut!((*a).end).write_unaligned(110);
            addr_of_mut!((*a).threadId).write_unaligned(77);
            addr_of_mut!((*a).correlationId).write_unaligned(5);
        }),
        // A second call of the same function: its name is looked up and written once.
        common::record::<ApiRec>(|a| unsafe {
            addr_of_mut!((*a).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_RUNTIME);
            addr_of_mut!((*a).cbid).write_unaligned(211);
            addr_of_mut!((*a).start).write_unaligned(120);
            addr_of_mut!((*a).end).write_unaligned(125);
            addr_of_mut!((*a).threadId).write_unaligned(77);
            addr_of_mut!((*a).correlationId).write_unaligned(7);
        }),
        common::record::<KernelRec>(|k| unsafe {
            addr_of_mut!((*k).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
            addr_of_mut!((*k).registersPerThread).write_unaligned(40);
            addr_of_mut!((*k).start).write_unaligned(200);
            addr_of_mut!((*k).end).write_unaligned(260);
            addr_of_mut!((*k).deviceId).write_unaligned(0);
            addr_of_mut!((*k).streamId).write_unaligned(13);
            addr_of_mut!((*k).gridX).write_unaligned(8);
            addr_of_mut!((*k).gridY).write_unaligned(4);
            addr_of_mut!((*k).gridZ).write_unaligned(2);
            addr_of_mut!((*k).blockX).write_unaligned(128);
            addr_of_mut!((*k).blockY).write_unaligned(1);
            addr_of_mut!((*k).blockZ).write_unaligned(1);
            addr_of_mut!((*k).staticSharedMemory).write_unaligned(1024);
            addr_of_mut!((*k).dynamicSharedMemory).write_unaligned(4096);
            addr_of_mut!((*k).correlationId).write_unaligned(5);
            addr_of_mut!((*k).graphId).write_unaligned(9);
            addr_of_mut!((*k).name).write_unaligned(kname.as_ptr());
        }),
        common::record::<MemcpyRec>(|m| unsafe {
            addr_of_mut!((*m).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_MEMCPY);
            addr_of_mut!((*m).copyKind).write_unaligned(1);
            addr_of_mut!((*m).bytes).write_unaligned(65536);
            addr_of_mut!((*m).start).write_unaligned(300);
            addr_of_mut!((*m).end).write_unaligned(320);
            addr_of_mut!((*m).streamId).write_unaligned(13);
            addr_of_mut!((*m).correlationId).write_unaligned(6);
        }),
        common::record::<GraphRec>(|g| unsafe {
            addr_of_mut!((*g).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
            addr_of_mut!((*g).correlationId).write_unaligned(8);
            addr_of_mut!((*g).start).write_unaligned(400);
            addr_of_mut!((*g).end).write_unaligned(480);
            addr_of_mut!((*g).deviceId).write_unaligned(0);
            addr_of_mut!((*g).graphId).write_unaligned(3);
            addr_of_mut!((*g).streamId).write_unaligned(14);
        }),
        common::record::<MemsetRec>(|m| unsafe {
            addr_of_mut!((*m).kind).write_unaligned(Kind::CUPTI_ACTIVITY_KIND_MEMSET);
            addr_of_mut!((*m).value).write_unaligned(255);
            addr_of_mut!((*m).bytes).write_unaligned(512);
            addr_of_mut!((*m).start).write_unaligned(330);
            addr_of_mut!((*m).end).write_unaligned(331);
            addr_of_mut!((*m).streamId).write_unaligned(13);
        }),
    ];
    common::set_records("libcupti.so", recs);

    assert_eq!(opbench_trace_inject::InitializeInjection(), 1);

    common::exercise_nvtx();
    // Returning ends the child test: its exit runs the library's exit handler.
}

#[test]
fn records_and_nvtx_ranges_reach_the_raw_file_and_the_exit_handler_closes_it() {
    const NAME: &str = "records_and_nvtx_ranges_reach_the_raw_file_and_the_exit_handler_closes_it";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        child();
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let text = common::run_child(NAME, tmp.path());
    let raw = common::Raw::new(&text);
    let lines = &raw.lines;
    let find = |tag: &str| raw.tagged(tag);
    let name = |id: &str| raw.name(id);
    // Header: format 1, the child's pid, the fake's CUPTI version.
    assert_eq!(lines[0][0], "H");
    assert_eq!((lines[0][1], lines[0][3]), ("1", "130001"));
    let w = find("W");
    assert!(w.iter().any(|l| l[1].contains("SYNCHRONIZATION")), "{text}");
    assert_eq!(
        find("G")[0][1..],
        ["0", "Fake H100", "9", "0", "132", "85899345920"]
    );
    let k = find("K");
    assert_eq!(k.len(), 1, "{text}");
    // start end device stream corr grid(3) block(3) regs static dynamic graph name reserved
    assert_eq!(
        k[0][1..16],
        ["200", "260", "0", "13", "5", "8", "4", "2", "128", "1", "1", "40", "1024", "4096", "9"]
    );
    assert_eq!(name(k[0][16]), "_Z6kernelPf");
    let c = find("C");
    assert_eq!(
        c[0][1..10],
        ["300", "320", "0", "13", "6", "65536", "1", "0", "0"]
    );
    let a = find("A");
    assert_eq!(a[0][1..], ["400", "480", "0", "14", "8", "3"]);
    let m = find("M");
    assert_eq!((m[0][6], m[0][8]), ("512", "255"));
    let r = find("R");
    assert_eq!(r[0][1..7], ["100", "110", "77", "5", "211", "0"]);
    assert_eq!(name(r[0][7]), "cudaLaunchKernel_v7000");
    assert_eq!((r.len(), r[1][4], r[1][7]), (2, "7", r[0][7]));
    let launch_names = find("N")
        .iter()
        .filter(|l| l[2] == "cudaLaunchKernel_v7000")
        .count();
    assert_eq!(launch_names, 1);
    assert_eq!(find("D").last().unwrap()[1], "2");
    raw.check_nvtx_and_end();
}

#[test]
fn graph_level_tracing_is_asked_for_and_a_refused_kernel_kind_is_reported() {
    const NAME: &str = "graph_level_tracing_is_asked_for_and_a_refused_kernel_kind_is_reported";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let text = common::run_child_with(NAME, tmp.path(), &[("OPBENCH_TRACE_GRAPHS", "graph")]);
    let raw = common::Raw::new(&text);
    let w = raw.tagged("W");
    assert!(
        w.iter()
            .any(|l| l[1].contains("CONCURRENT_KERNEL")
                && l[1].contains("graph-level tracing is on")),
        "{text}"
    );
    // Without it, the kernel kind is enabled.
    let text = common::run_child(NAME, tmp.path());
    assert!(!text.contains("CONCURRENT_KERNEL"), "{text}");
}

/// The child: starts the library, then reads from the fake how many callback ids of each
/// domain (driver, runtime) had their records turned off, and checks them against `want`.
fn api_child(want: i32) {
    assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
    // SAFETY: the fake exports fake_api_off(int) -> int.
    let off: unsafe extern "C" fn(std::ffi::c_int) -> std::ffi::c_int =
        unsafe { common::fake_fn("libcupti.so", "fake_api_off") };
    // SAFETY: a plain C function of the fake.
    let (driver, runtime) = unsafe { (off(1), off(2)) };
    assert_eq!(
        (driver, runtime),
        (want, want),
        "records turned off (driver, runtime)"
    );
}

#[test]
fn query_calls_are_left_out_unless_every_call_is_asked_for() {
    const NAME: &str = "query_calls_are_left_out_unless_every_call_is_asked_for";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        // The fake names callback ids 3 and 4 of each domain as queries.
        api_child(
            if std::env::var("OPBENCH_TRACE_API").as_deref() == Ok("all") {
                0
            } else {
                2
            },
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let text = common::run_child(NAME, tmp.path());
    assert!(!text.contains("leaving out"), "{text}");
    common::run_child_with(NAME, tmp.path(), &[("OPBENCH_TRACE_API", "all")]);
}

type ApiCall = unsafe extern "C" fn(i32, u32, u32, i32) -> i32;
type PerDomain = unsafe extern "C" fn(i32) -> i32;

/// The traced process of the callback test: the calls CUPTI would report, through the fake.
fn callback_child() {
    assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
    // SAFETY: the fake's functions, with their C signatures.
    unsafe {
        let call: ApiCall = common::fake_fn("libcupti.so", "fake_api_call");
        let on: PerDomain = common::fake_fn("libcupti.so", "fake_callbacks_on");
        let off: PerDomain = common::fake_fn("libcupti.so", "fake_api_off");
        let all = std::env::var("OPBENCH_TRACE_API").as_deref() == Ok("all");
        let runtime_ids =
            cudarc::cupti::sys::CUpti_runtime_api_trace_cbid::CUPTI_RUNTIME_TRACE_CBID_SIZE as i32;
        // Every id but 0 is named; ids 3 and 4 are queries, left out unless all are asked for.
        assert_eq!(on(2), runtime_ids - 1 - if all { 0 } else { 2 });
        assert_eq!((off(1), off(2)), (0, 0), "no activity record turned off");
        // A launch in the runtime domain (cudaLaunchKernel), the driver call inside it, a
        // query, a failed launch.
        assert_eq!(call(2, 5, 77, 0), 1);
        assert_eq!(call(1, 5, 78, 0), 1);
        assert_eq!(call(2, 3, 79, 0), i32::from(all));
        assert_eq!(call(2, 5, 80, 700), 1);
    }
}

#[test]
fn api_calls_are_recorded_through_callbacks_enabled_only_for_the_calls_kept() {
    const NAME: &str = "api_calls_are_recorded_through_callbacks_enabled_only_for_the_calls_kept";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        callback_child();
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let callback = ("OPBENCH_TRACE_API_RECORDS", "callback");
    let text = common::run_child_with(NAME, tmp.path(), &[callback]);
    let raw = common::Raw::new(&text);
    let r = raw.tagged("R");
    let v = raw.tagged("V");
    assert_eq!((r.len(), v.len()), (2, 1), "{text}");
    // R start end tid correlation cbid return name
    assert_eq!((r[0][4], r[0][5], r[0][6]), ("77", "5", "0"), "{text}");
    assert_eq!(raw.name(r[0][7]), "cudaLaunchKernel_v7000");
    assert_eq!(
        (r[1][4], r[1][6]),
        ("80", "700"),
        "the failed call's result: {text}"
    );
    assert_eq!(
        (v[0][4], raw.name(v[0][7]).as_str()),
        ("78", "cuLaunchKernel")
    );
    let ns = |l: &Vec<&str>, i: usize| l[i].parse::<u64>().unwrap();
    assert!(
        r.iter().chain(&v).all(|l| ns(l, 1) < ns(l, 2)),
        "entry before exit: {text}"
    );
    assert!(
        r.iter().chain(&v).all(|l| ns(l, 3) > 0),
        "a thread id: {text}"
    );
    assert_eq!(raw.lines.last().unwrap()[..2], ["E", "exit"], "{text}");
    assert!(!text.contains("cuptiSubscribe"), "no warning: {text}");

    let text = common::run_child_with(NAME, tmp.path(), &[callback, ("OPBENCH_TRACE_API", "all")]);
    let raw = common::Raw::new(&text);
    assert_eq!(raw.tagged("R").len(), 3, "the query too: {text}");
}

/// The child of the `--api none` test: the activity kinds enabled and the subscribers, as the
/// settings it runs with should leave them.
fn no_calls_child() {
    assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
    let none = std::env::var("OPBENCH_TRACE_API").as_deref() == Ok("none");
    let callback = std::env::var("OPBENCH_TRACE_API_RECORDS").as_deref() == Ok("callback");
    // DEVICE, CONCURRENT_KERNEL, MEMCPY, MEMSET, RUNTIME and DRIVER (the fake refuses
    // SYNCHRONIZATION); without RUNTIME and DRIVER when they are not asked of the activity API.
    let want = match (none, callback) {
        (true, _) => (4, 0),
        (false, true) => (4, 1),
        (false, false) => (6, 0),
    };
    // SAFETY: the fake's functions, with their C signatures.
    let got = unsafe {
        let enabled: unsafe extern "C" fn() -> i32 = common::fake_fn("libcupti.so", "fake_enabled");
        let subs: unsafe extern "C" fn() -> i32 =
            common::fake_fn("libcupti.so", "fake_subscribers");
        (enabled(), subs())
    };
    assert_eq!(
        got, want,
        "(kinds enabled, subscribers) with none={none} callback={callback}"
    );
}

#[test]
fn with_api_none_no_api_kind_or_callback_is_enabled_and_the_file_says_so() {
    const NAME: &str = "with_api_none_no_api_kind_or_callback_is_enabled_and_the_file_says_so";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        no_calls_child();
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let none = ("OPBENCH_TRACE_API", "none");
    let callback = ("OPBENCH_TRACE_API_RECORDS", "callback");
    for env in [vec![none], vec![none, callback]] {
        let text = common::run_child_with(NAME, tmp.path(), &env);
        assert!(
            text.contains("OPBENCH_TRACE_API=none (trace --api none)"),
            "{text}"
        );
        assert!(
            !text.contains("not recorded: OPBENCH_TRACE_KINDS"),
            "{text}"
        );
    }
    for env in [vec![], vec![callback]] {
        let text = common::run_child_with(NAME, tmp.path(), &env);
        assert!(!text.contains("--api none"), "{text}");
    }
}

#[test]
fn another_cuptis_layouts_are_not_read_and_the_file_says_why() {
    const NAME: &str = "another_cuptis_layouts_are_not_read_and_the_file_says_why";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let text = common::run_child_with(NAME, tmp.path(), &[("FAKE_CUPTI_VERSION", "120090")]);
    let raw = common::Raw::new(&text);
    assert_eq!(raw.lines[0][3], "120090");
    let w = raw.tagged("W");
    assert!(
        w.len() == 1 && w[0][1].contains("outside 130000..140000"),
        "{text}"
    );
    assert_eq!(raw.lines.last().unwrap()[..2], ["E", "refused"], "{text}");
    assert!(raw.tagged("K").is_empty());
}

#[test]
fn a_process_with_nvtx_and_no_cuda_closes_its_file_at_exit() {
    const NAME: &str = "a_process_with_nvtx_and_no_cuda_closes_its_file_at_exit";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        common::exercise_nvtx();
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let text = common::run_child(NAME, tmp.path());
    common::Raw::new(&text).check_nvtx_and_end();
}

#[test]
fn a_libcupti_named_by_path_is_used_without_the_library_path() {
    const NAME: &str = "a_libcupti_named_by_path_is_used_without_the_library_path";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let lib_dir = tmp.path().join("lib");
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&lib_dir).unwrap();
    std::fs::create_dir_all(&empty).unwrap();
    common::build_fake(&lib_dir);
    let lib = lib_dir.join("libcupti.so");
    let lib = lib.to_str().unwrap();
    let text = common::run_child_with(NAME, &empty, &[("OPBENCH_CUPTI_LIB", lib)]);
    let raw = common::Raw::new(&text);
    assert_eq!(raw.lines[0][3], "130001", "{text}");
    assert_eq!(raw.lines.last().unwrap()[..2], ["E", "exit"], "{text}");
    // A path that does not load: said, and the file closed with the reason.
    let text = common::run_child_with(
        NAME,
        &empty,
        &[("OPBENCH_CUPTI_LIB", "/nonexistent/libcupti.so.13")],
    );
    let raw = common::Raw::new(&text);
    assert_eq!(raw.lines[0][3], "0", "{text}");
    let w = raw.tagged("W");
    assert!(
        w[0][1].contains("cannot load libcupti /nonexistent/libcupti.so.13"),
        "{text}"
    );
    assert_eq!(raw.lines.last().unwrap()[..2], ["E", "refused"], "{text}");
}

#[test]
fn a_libcupti_the_program_loaded_first_is_the_one_recorded_through() {
    const NAME: &str = "a_libcupti_the_program_loaded_first_is_the_one_recorded_through";
    if let Some(own) = std::env::var_os("TEST_PROGRAMS_CUPTI") {
        // The program (PyTorch) loads its own copy before CUDA starts.
        let own = CString::new(own.to_str().unwrap()).unwrap();
        extern "C" {
            fn dlopen(file: *const std::ffi::c_char, mode: i32) -> *mut std::ffi::c_void;
        }
        // SAFETY: dlopen with a valid C string.
        assert!(!unsafe { dlopen(own.as_ptr(), 2) }.is_null());
        assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
        return;
    }
    if std::env::var_os(common::CHILD_ENV).is_some() {
        assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
        if let Some(other) = std::env::var_os("TEST_NOT_LOADED") {
            let other = CString::new(other.to_str().unwrap()).unwrap();
            extern "C" {
                fn dlopen(file: *const std::ffi::c_char, mode: i32) -> *mut std::ffi::c_void;
            }
            // SAFETY: dlopen with a valid C string; RTLD_NOW | RTLD_NOLOAD loads nothing.
            let h = unsafe { dlopen(other.as_ptr(), 2 | 4) };
            assert!(
                h.is_null(),
                "{other:?} was loaded beside the libcupti recorded through"
            );
        }
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (toolkit, wheel, alias) = (
        tmp.path().join("toolkit"),
        tmp.path().join("wheel"),
        tmp.path().join("alias"),
    );
    for d in [&toolkit, &wheel, &alias] {
        std::fs::create_dir_all(d).unwrap();
    }
    common::build_fake_as(&toolkit, "libcupti.so.13");
    common::build_fake_with(&wheel, "libcupti.so.13", &["-DFAKE_DEFAULT_VERSION=130002"]);
    let chosen = toolkit.join("libcupti.so.13");
    let owned = wheel.join("libcupti.so.13");
    // What `trace` sets up: both lookup names point at the chosen (toolkit's) file.
    for name in ["libcupti.so", "libcupti.so.13"] {
        std::os::unix::fs::symlink(&chosen, alias.join(name)).unwrap();
    }
    let env = [
        ("OPBENCH_CUPTI_LIB", chosen.to_str().unwrap()),
        ("OPBENCH_TRACE_CUPTI_ALIAS", alias.to_str().unwrap()),
    ];
    // Whether the raw file says the program's own libcupti was recorded through.
    let says_own = |raw: &common::Raw| {
        raw.tagged("W")
            .iter()
            .any(|l| l[1].contains("own libcupti"))
    };
    // A program without a libcupti of its own: the chosen one (version 130001).
    let text = common::run_child_with(NAME, &alias, &env);
    let raw = common::Raw::new(&text);
    assert_eq!(raw.lines[0][3], "130001", "{text}");
    assert!(!says_own(&raw), "{text}");
    // A program that loaded the wheel's first: recorded through that one (130002), said so,
    // and the alias names now point at it.
    let mut with_own = env.to_vec();
    with_own.push(("TEST_PROGRAMS_CUPTI", owned.to_str().unwrap()));
    let text = common::run_child_with(NAME, &alias, &with_own);
    let raw = common::Raw::new(&text);
    assert_eq!(raw.lines[0][3], "130002", "{text}");
    let w = raw.tagged("W");
    assert!(
        w.iter().any(|l| l[1].contains("the program's own libcupti")
            && l[1].contains(owned.to_str().unwrap())),
        "{text}"
    );
    for name in ["libcupti.so", "libcupti.so.13"] {
        assert_eq!(std::fs::read_link(alias.join(name)).unwrap(), owned);
    }
    // A later process of the run without a libcupti of its own: the one the links now name,
    // not a second copy beside it.
    let mut later = env.to_vec();
    later.push(("TEST_NOT_LOADED", chosen.to_str().unwrap()));
    let text = common::run_child_with(NAME, &alias, &later);
    let raw = common::Raw::new(&text);
    assert_eq!(raw.lines[0][3], "130002", "{text}");
    assert!(!says_own(&raw), "{text}");
}

/// The program pausing and resuming a process started paused: nothing attached before the
/// first resume, each pause hands over what was held and detaches, ids after a resume move
/// past the earlier ones, and a pause or resume out of turn is refused and said.
fn pause_child() {
    // SAFETY (every call below): the fake's functions, with their C signatures.
    let fake = |name: &str| unsafe {
        common::fake_fn::<unsafe extern "C" fn() -> i32>("libcupti.so", name)
    };
    assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
    let state = || unsafe {
        (
            fake("fake_registrations")(),
            fake("fake_enabled")(),
            fake("fake_finalized")(),
        )
    };
    assert_eq!(state(), (0, 0, 0), "started paused: CUPTI untouched");
    assert_eq!(
        opbench_trace_inject::opbench_trace_pause(),
        1,
        "already paused"
    );
    let per_thread = || unsafe { fake("fake_per_thread")() };
    assert_eq!(per_thread(), -1, "not set before the first resume");
    assert_eq!(opbench_trace_inject::opbench_trace_resume(), 0);
    assert_eq!(state().0, 1);
    assert_eq!(
        per_thread(),
        1,
        "per-thread buffers asked for before registering"
    );
    assert!(state().1 > 0);
    assert_eq!(
        opbench_trace_inject::opbench_trace_resume(),
        1,
        "already on"
    );
    common::set_records(
        "libcupti.so",
        vec![common::kernel_record("first", 100, 200)],
    );
    assert_eq!(opbench_trace_inject::opbench_trace_pause(), 0);
    assert_eq!(state().2, 1, "a pause detaches CUPTI");
    assert_eq!(per_thread(), 0, "cleared for whoever attaches next");
    // Records set while paused reach nothing: CUPTI is detached.
    common::set_records(
        "libcupti.so",
        vec![common::kernel_record("second", 300, 400)],
    );
    assert_eq!(opbench_trace_inject::opbench_trace_resume(), 0);
    assert_eq!(state().0, 2, "a resume attaches again");
    // Returning: the exit handler flushes "second" (correlation id 1 again from CUPTI).
}

#[test]
fn recording_paused_and_resumed_by_the_program() {
    const NAME: &str = "recording_paused_and_resumed_by_the_program";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        pause_child();
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let text = common::run_child_with(NAME, tmp.path(), &[("OPBENCH_TRACE_START", "paused")]);
    let raw = common::Raw::new(&text);
    let states: Vec<&str> = raw.tagged("S").iter().map(|l| l[2]).collect();
    assert_eq!(states, ["0", "1", "0", "1"], "{text}");
    assert_eq!(raw.tagged("S")[0][1], "0", "paused from the start: {text}");
    let k = raw.tagged("K");
    let got: Vec<(String, &str)> = k.iter().map(|l| (raw.name(l[16]), l[5])).collect();
    assert_eq!(
        got,
        [("first".to_string(), "1"), ("second".to_string(), "2")],
        "the second span's id 1 moves past the first's: {text}"
    );
    // The first kernel is written before the pause line, the second after the last resume.
    let pos = |tag: &str, i: usize| {
        raw.lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l[0] == tag)
            .nth(i)
            .unwrap()
            .0
    };
    assert!(
        pos("K", 0) < pos("S", 2) && pos("S", 3) < pos("K", 1),
        "{text}"
    );
    let w = raw.tagged("W");
    assert!(
        w.iter()
            .any(|l| l[1].contains("opbench_trace_pause: recording is already paused")),
        "{text}"
    );
    assert!(
        w.iter()
            .any(|l| l[1].contains("opbench_trace_resume: recording is already on")),
        "{text}"
    );
    assert_eq!(raw.lines.last().unwrap()[..2], ["E", "exit"], "{text}");
}

/// Whether a thread of this process is named like the writer thread (`comm` holds 15 bytes).
fn writer_thread_exists() -> bool {
    std::fs::read_dir("/proc/self/task").unwrap().any(|t| {
        std::fs::read_to_string(t.unwrap().path().join("comm"))
            .is_ok_and(|c| c.trim() == "opbench-trace-w")
    })
}

/// One kernel handed over mid-run by a flush: decoded by the writer thread, or in CUPTI's
/// callback with `OPBENCH_TRACE_DECODE=inline`; the child prints which.
fn writer_child() {
    common::set_records(
        "libcupti.so",
        vec![common::kernel_record("mid_run", 100, 200)],
    );
    assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
    assert!(!writer_thread_exists(), "no thread before the first buffer");
    // SAFETY: the fake's cuptiActivityFlushAll(flag) -> result.
    unsafe {
        let flush: unsafe extern "C" fn(u32) -> i32 =
            common::fake_fn("libcupti.so", "cuptiActivityFlushAll");
        assert_eq!(flush(0), 0);
    }
    // The thread names itself once it runs: look for up to two seconds.
    let seen = (0..200).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        writer_thread_exists()
    });
    println!("WRITER_THREAD={seen}");
}

#[test]
fn buffers_are_decoded_by_the_writer_thread_unless_inline_is_asked_for() {
    const NAME: &str = "buffers_are_decoded_by_the_writer_thread_unless_inline_is_asked_for";
    if std::env::var_os(common::CHILD_ENV).is_some() {
        writer_child();
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    let mut kernels = Vec::new();
    for (env, thread) in [
        (vec![], true),
        (vec![("OPBENCH_TRACE_DECODE", "inline")], false),
    ] {
        let (status, text, log) = common::run_child_status(NAME, tmp.path(), &env);
        assert!(status.success(), "{log}");
        assert!(
            log.contains(&format!("WRITER_THREAD={thread}")),
            "{env:?}: {log}"
        );
        let raw = common::Raw::new(&text);
        assert_eq!(raw.lines.last().unwrap()[..2], ["E", "exit"], "{text}");
        let k: Vec<String> = raw.tagged("K").iter().map(|l| l[1..16].join(" ")).collect();
        assert_eq!(k.len(), 1, "{text}");
        kernels.push(k);
    }
    assert_eq!(kernels[0], kernels[1], "the same lines either way");
}

/// A CUPTI setting the library makes by default and leaves to CUPTI when `env` turns it off:
/// in the child, starts the library and prints the value the fake libcupti's `getter` reads
/// back (-1: never set); in the parent, checks `on` by default, -1 with `env`, and that the raw
/// file names the change (`says`) only with `env`.
fn setting_made_unless_turned_off(
    name: &str,
    getter: &str,
    on: i32,
    env: (&str, &str),
    says: &str,
) {
    if std::env::var_os(common::CHILD_ENV).is_some() {
        assert_eq!(opbench_trace_inject::InitializeInjection(), 1);
        // SAFETY: the fake's getter takes nothing and returns the value as an int.
        let v =
            unsafe { common::fake_fn::<unsafe extern "C" fn() -> i32>("libcupti.so", getter)() };
        println!("VALUE={v}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    common::build_fake(tmp.path());
    for (env, want, named) in [(vec![], on, false), (vec![env], -1, true)] {
        let (status, text, log) = common::run_child_status(name, tmp.path(), &env);
        assert!(
            status.success() && log.contains(&format!("VALUE={want}")),
            "{env:?}: {log}"
        );
        assert_eq!(text.contains(says), named, "{env:?}: {text}");
    }
}

#[test]
fn per_thread_buffers_are_asked_for_unless_turned_off_and_the_file_says_so() {
    setting_made_unless_turned_off(
        "per_thread_buffers_are_asked_for_unless_turned_off_and_the_file_says_so",
        "fake_per_thread",
        1,
        ("OPBENCH_TRACE_PER_THREAD_BUFFERS", "0"),
        "global activity buffers",
    );
}

/// API records carry system thread ids (CUPTI's type 1, the ids NVTX ranges carry) unless
/// `OPBENCH_TRACE_THREAD_IDS=cupti` asks for CUPTI's default.
#[test]
fn system_thread_ids_unless_cuptis_own_are_asked_for_and_the_file_says_so() {
    setting_made_unless_turned_off(
        "system_thread_ids_unless_cuptis_own_are_asked_for_and_the_file_says_so",
        "fake_thread_id_type",
        1,
        ("OPBENCH_TRACE_THREAD_IDS", "cupti"),
        "CUPTI's default thread ids",
    );
}
