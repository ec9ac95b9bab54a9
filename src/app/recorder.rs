//! Recording the 3D view as a numbered PNG sequence (`frame-00001.png`, …) in a fresh
//! `drape-rec-<unix time>/` folder, for turning into a video or a GIF with any tool.
//!
//! Encoding a PNG takes longer than a frame, so a worker thread writes the files: the loop
//! hands it each frame's pixels through a bounded queue and, when the queue is full, skips the
//! frame rather than stalling the window (the count of skipped frames is reported at the end).

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::thread::JoinHandle;

/// Frames waiting for the encoder before new ones are skipped.
const QUEUE: usize = 8;

/// One captured frame: RGBA rows top to bottom.
struct Picture {
    path: PathBuf,
    width: u32,
    height: u32,
    rgba: Vec<u8>,
}

/// A recording in progress.
pub struct Recorder {
    folder: PathBuf,
    frames: u32,
    skipped: u32,
    queue: Option<SyncSender<Picture>>,
    worker: Option<JoinHandle<Result<(), String>>>,
}

/// The file of frame `index` (1-based) in `folder`.
pub fn frame_path(folder: &Path, index: u32) -> PathBuf {
    folder.join(format!("frame-{index:05}.png"))
}

/// The `width` × `height` rectangle at (`x`, `y`) of an RGBA image `image_width` wide
/// (clamped to the image).
pub fn crop(rgba: &[u8], image_width: usize, (x, y, width, height): (usize, usize, usize, usize)) -> Vec<u8> {
    let image_height = rgba.len() / (4 * image_width.max(1));
    let (x, y) = (x.min(image_width), y.min(image_height));
    let (width, height) = (width.min(image_width - x), height.min(image_height - y));
    let mut out = Vec::with_capacity(width * height * 4);
    for row in rgba.chunks_exact(image_width * 4).skip(y).take(height) {
        out.extend_from_slice(&row[x * 4..(x + width) * 4]);
    }
    out
}

fn encode(pictures: Receiver<Picture>) -> Result<(), String> {
    for p in pictures {
        super::write_png(&p.path, &p.rgba, p.width, p.height).map_err(|e| format!("writing {}: {e}", p.path.display()))?;
    }
    Ok(())
}

impl Recorder {
    /// Starts recording into a new folder `drape-rec-<stamp>` under `parent`.
    pub fn start(parent: &Path, stamp: u64) -> std::io::Result<Self> {
        let folder = parent.join(format!("drape-rec-{stamp}"));
        std::fs::create_dir_all(&folder)?;
        let (queue, pictures) = mpsc::sync_channel(QUEUE);
        let worker = std::thread::Builder::new()
            .name("drape-recorder".into())
            .spawn(move || encode(pictures))?;
        Ok(Self {
            folder,
            frames: 0,
            skipped: 0,
            queue: Some(queue),
            worker: Some(worker),
        })
    }

    /// The folder the frames go to.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Frames queued so far.
    pub fn frames(&self) -> u32 {
        self.frames
    }

    /// Queues one frame (RGBA rows top to bottom); skips it when the encoder is behind.
    pub fn add(&mut self, width: u32, height: u32, rgba: Vec<u8>) {
        let Some(queue) = &self.queue else { return };
        let picture = Picture {
            path: frame_path(&self.folder, self.frames + 1),
            width,
            height,
            rgba,
        };
        match queue.try_send(picture) {
            Ok(()) => self.frames += 1,
            Err(TrySendError::Full(_)) => self.skipped += 1,
            Err(TrySendError::Disconnected(_)) => self.queue = None,
        }
    }

    /// Waits for the encoder and returns a summary for the status line.
    pub fn finish(mut self) -> Result<String, String> {
        self.queue = None; // closes the channel: the worker ends after the last frame
        let outcome = self
            .worker
            .take()
            .map_or(Ok(()), |w| w.join().unwrap_or_else(|_| Err("the encoder thread panicked".into())));
        outcome?;
        let skipped = match self.skipped {
            0 => String::new(),
            n => format!(" ({n} skipped while the encoder was busy)"),
        };
        Ok(format!("recorded {} frames to {}/{skipped}", self.frames, self.folder.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_written_as_numbered_pngs() {
        let dir = tempfile::tempdir().unwrap();
        let mut recorder = Recorder::start(dir.path(), 42).unwrap();
        for shade in [0u8, 100, 200] {
            recorder.add(4, 3, [shade, shade, shade, 255].repeat(12));
        }
        let folder = recorder.folder().to_path_buf();
        assert_eq!(folder, dir.path().join("drape-rec-42"));
        let summary = recorder.finish().unwrap();
        assert!(summary.starts_with("recorded 3 frames"), "{summary}");
        let second = image::open(frame_path(&folder, 2)).unwrap().to_rgba8();
        assert_eq!(second.dimensions(), (4, 3));
        assert_eq!(second.get_pixel(1, 1).0, [100, 100, 100, 255]);
        assert!(!frame_path(&folder, 4).exists());
    }

    #[test]
    fn crop_takes_the_view_rectangle() {
        // A 4 × 3 image whose pixel (x, y) has red = 10 x + y.
        let image: Vec<u8> = (0..3).flat_map(|y| (0..4).flat_map(move |x| [10 * x + y, 0, 0, 255])).collect();
        let cut = crop(&image, 4, (1, 1, 2, 2));
        let reds: Vec<u8> = cut.chunks(4).map(|p| p[0]).collect();
        assert_eq!(reds, [11, 21, 12, 22]);
        assert_eq!(crop(&image, 4, (3, 2, 5, 5)).len(), 4, "clamped to the image");
    }
}
