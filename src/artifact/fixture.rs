//! One in-memory artifact for unit tests: a CPU run holding the given rows, so a test states
//! only what it is about (kind, rows, and the run's id, commit and time where they matter).

use super::{Artifact, Ceilings, Loaded, ResultRow, RunInfo};
use crate::env::Env;

/// A loaded artifact `{id}.json` of `kind` with `results`, finished at `finished_utc`.
pub fn loaded(kind: &str, id: &str, finished_utc: &str, results: Vec<ResultRow>) -> Loaded {
    Loaded {
        file: format!("{id}.json"),
        artifact: Artifact {
            schema_version: 1,
            kind: kind.into(),
            run: RunInfo {
                id: id.into(),
                started_utc: finished_utc.into(),
                finished_utc: finished_utc.into(),
                complete: true,
                git_commit: None,
                git_dirty: None,
                tool_version: "0".into(),
                command_line: vec![],
                synthetic: false,
            },
            env: Env::cpu(),
            ceilings: Ceilings::default(),
            compiler: None,
            results,
            notes: vec![],
        },
    }
}
