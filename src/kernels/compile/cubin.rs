//! The kernel symbols of a cubin (an ELF64 little-endian file), read from its symbol table.
//!
//! A kernel is a function symbol with global or weak binding (template instances are weak)
//! that has its own `.nv.info.<symbol>` section, where the CUDA toolchain keeps a kernel's
//! parameter layout; device functions have none.

use anyhow::{bail, Context, Result};

const SHT_SYMTAB: u32 = 2;
const STT_FUNC: u8 = 2;
const STB_GLOBAL: u8 = 1;
const STB_WEAK: u8 = 2;

fn u16_at(b: &[u8], at: usize) -> Result<u16> {
    let s = b.get(at..at + 2).context("truncated ELF file")?;
    Ok(u16::from_le_bytes(s.try_into().expect("2 bytes")))
}

fn u32_at(b: &[u8], at: usize) -> Result<u32> {
    let s = b.get(at..at + 4).context("truncated ELF file")?;
    Ok(u32::from_le_bytes(s.try_into().expect("4 bytes")))
}

fn u64_at(b: &[u8], at: usize) -> Result<usize> {
    let s = b.get(at..at + 8).context("truncated ELF file")?;
    usize::try_from(u64::from_le_bytes(s.try_into().expect("8 bytes"))).context("ELF offset")
}

/// A NUL-terminated name at `at` in a string table.
fn name_at(strtab: &[u8], at: usize) -> Result<String> {
    let tail = strtab
        .get(at..)
        .context("ELF name offset past its string table")?;
    let end = tail.iter().position(|c| *c == 0).unwrap_or(tail.len());
    Ok(String::from_utf8_lossy(&tail[..end]).into_owned())
}

struct Section {
    name: u32,
    kind: u32,
    offset: usize,
    size: usize,
    link: u32,
    entsize: usize,
}

impl Section {
    fn bytes<'a>(&self, elf: &'a [u8]) -> Result<&'a [u8]> {
        elf.get(self.offset..self.offset.saturating_add(self.size))
            .context("ELF section past the end of the file")
    }
}

/// The kernels' (mangled) symbol names, in symbol-table order.
pub fn kernel_symbols(elf: &[u8]) -> Result<Vec<String>> {
    if elf.get(..4) != Some(b"\x7fELF".as_slice()) {
        bail!("not an ELF file (a cubin starts with \\x7fELF)");
    }
    if elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        bail!("not a 64-bit little-endian ELF file");
    }
    let shoff = u64_at(elf, 0x28)?;
    let shentsize = u16_at(elf, 0x3A)? as usize;
    let shnum = u16_at(elf, 0x3C)? as usize;
    let shstrndx = u16_at(elf, 0x3E)? as usize;
    if shentsize < 64 {
        bail!("ELF section headers of {shentsize} bytes (64 expected)");
    }
    let sections = (0..shnum)
        .map(|i| {
            let h = shoff + i * shentsize;
            Ok(Section {
                name: u32_at(elf, h)?,
                kind: u32_at(elf, h + 4)?,
                offset: u64_at(elf, h + 24)?,
                size: u64_at(elf, h + 32)?,
                link: u32_at(elf, h + 40)?,
                entsize: u64_at(elf, h + 56)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let shstr = sections
        .get(shstrndx)
        .context("ELF section-name table index out of range")?
        .bytes(elf)?;
    let section_names = sections
        .iter()
        .map(|s| name_at(shstr, s.name as usize))
        .collect::<Result<Vec<_>>>()?;
    let mut out = Vec::new();
    for s in sections.iter().filter(|s| s.kind == SHT_SYMTAB) {
        let strtab = sections
            .get(s.link as usize)
            .context("ELF symbol table links no string table")?
            .bytes(elf)?;
        let table = s.bytes(elf)?;
        let entsize = if s.entsize == 0 { 24 } else { s.entsize };
        for sym in table.chunks_exact(entsize) {
            let info = sym[4];
            let (bind, kind) = (info >> 4, info & 0xF);
            if kind != STT_FUNC || !matches!(bind, STB_GLOBAL | STB_WEAK) {
                continue;
            }
            let name = name_at(strtab, u32_at(sym, 0)? as usize)?;
            let info_section = format!(".nv.info.{name}");
            if !name.is_empty() && section_names.contains(&info_section) && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 with a symbol table: (symbol, binding, type, has .nv.info section).
    fn elf(symbols: &[(&str, u8, u8, bool)]) -> Vec<u8> {
        let mut strtab = vec![0u8];
        let mut symtab = vec![0u8; 24];
        let mut shstr = b"\0.shstrtab\0.strtab\0.symtab\0".to_vec();
        for (name, bind, kind, info) in symbols {
            let at = strtab.len() as u32;
            strtab.extend_from_slice(name.as_bytes());
            strtab.push(0);
            let mut e = vec![0u8; 24];
            e[..4].copy_from_slice(&at.to_le_bytes());
            e[4] = (bind << 4) | kind;
            symtab.extend(e);
            if *info {
                shstr.extend_from_slice(format!(".nv.info.{name}\0").as_bytes());
            }
        }
        let mut f = vec![0u8; 64];
        f[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let data_at = f.len();
        f.extend(&shstr);
        let str_at = f.len();
        f.extend(&strtab);
        let sym_at = f.len();
        f.extend(&symtab);
        let shoff = f.len();
        // Sections: null, .shstrtab (1), .strtab (2), .symtab (3), then one per .nv.info name.
        let mut headers = vec![[0u64; 8]];
        headers.push([1, 3, data_at as u64, shstr.len() as u64, 0, 0, 0, 0]);
        headers.push([11, 3, str_at as u64, strtab.len() as u64, 0, 0, 0, 0]);
        headers.push([
            19,
            SHT_SYMTAB as u64,
            sym_at as u64,
            symtab.len() as u64,
            2,
            24,
            0,
            0,
        ]);
        let mut pos = 27u64;
        for (name, _, _, info) in symbols {
            if *info {
                headers.push([pos, 1, 0, 0, 0, 0, 0, 0]);
                pos += ".nv.info.".len() as u64 + name.len() as u64 + 1;
            }
        }
        for [name, kind, off, size, link, entsize, _, _] in &headers {
            let mut h = vec![0u8; 64];
            h[..4].copy_from_slice(&(*name as u32).to_le_bytes());
            h[4..8].copy_from_slice(&(*kind as u32).to_le_bytes());
            h[24..32].copy_from_slice(&off.to_le_bytes());
            h[32..40].copy_from_slice(&size.to_le_bytes());
            h[40..44].copy_from_slice(&(*link as u32).to_le_bytes());
            h[56..64].copy_from_slice(&entsize.to_le_bytes());
            f.extend(h);
        }
        f[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        f[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        f[0x3C..0x3E].copy_from_slice(&(headers.len() as u16).to_le_bytes());
        f[0x3E..0x40].copy_from_slice(&1u16.to_le_bytes());
        f
    }

    #[test]
    fn lists_global_and_weak_kernels_with_info_sections() {
        let f = elf(&[
            ("_Z6kernelPf", STB_GLOBAL, STT_FUNC, true),
            ("_Z7softmaxILi256EfEvPT0_", STB_WEAK, STT_FUNC, true),
            ("_Z6helperf", STB_GLOBAL, STT_FUNC, false),
            ("local_kernel", 0, STT_FUNC, true),
            ("a_variable", STB_GLOBAL, 1, true),
        ]);
        assert_eq!(
            kernel_symbols(&f).unwrap(),
            ["_Z6kernelPf", "_Z7softmaxILi256EfEvPT0_"]
        );
    }

    #[test]
    fn other_files_are_refused() {
        assert!(kernel_symbols(b"// PTX text").is_err());
        let mut f = elf(&[]);
        f[4] = 1;
        assert!(kernel_symbols(&f)
            .unwrap_err()
            .to_string()
            .contains("64-bit"));
        let f = elf(&[("k", STB_GLOBAL, STT_FUNC, true)]);
        assert!(kernel_symbols(&f[..f.len() - 10]).is_err());
    }
}
