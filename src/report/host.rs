//! How a report words the host facts `lab.json` keeps (see `lab::host`).

use crate::store::LabRecord;

/// The report's setup lines for the DUT host: CPU and cores, then OS and kernel.
pub(crate) fn setup_lines(lab: &LabRecord) -> Vec<String> {
    let Some(facts) = &lab.host else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    if let Some(cpu) = &facts.cpu {
        match facts.cores {
            Some(n) => lines.push(format!("{cpu} ({n} CPUs)")),
            None => lines.push(cpu.clone()),
        }
    }
    match (&facts.os, &facts.kernel) {
        (Some(os), Some(kernel)) => lines.push(format!("{os}, {kernel}")),
        (Some(one), None) | (None, Some(one)) => lines.push(one.clone()),
        (None, None) => {}
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_with_cores_then_os_and_kernel_and_missing_facts_left_out() {
        let lab: LabRecord = serde_json::from_str(
            r#"{"host": {"cpu": "AMD EPYC 7B13", "cores": 2, "os": null,
                         "kernel": "Linux dut 6.18.44 x86_64"}}"#,
        )
        .unwrap();
        assert_eq!(
            setup_lines(&lab),
            ["AMD EPYC 7B13 (2 CPUs)", "Linux dut 6.18.44 x86_64"]
        );
        assert!(setup_lines(&LabRecord::default()).is_empty());
    }
}
