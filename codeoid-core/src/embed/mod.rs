//! TODO(owner): embed
