//! TODO(owner): translate
